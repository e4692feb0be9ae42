import { definePlugin } from '../../kernel/plugin.js';

export const fieldsPlugin = definePlugin({ name: 'fields' });
