export { httpPlugin as default } from './plugin.js';
