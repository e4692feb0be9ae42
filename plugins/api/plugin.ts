import { definePlugin } from '../../kernel/plugin.js';

export const apiPlugin = definePlugin({ name: 'api' });
