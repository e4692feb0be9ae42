import { definePlugin } from '../../kernel/plugin.js';

export const entriesPlugin = definePlugin({ name: 'entries' });
