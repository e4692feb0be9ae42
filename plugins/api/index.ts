export { apiPlugin as default } from './plugin.js';
