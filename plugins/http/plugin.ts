import { definePlugin } from '../../kernel/plugin.js';

export const httpPlugin = definePlugin({ name: 'http' });
