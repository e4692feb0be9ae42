import { definePlugin } from '../../kernel/plugin.js';

export const sourcesPlugin = definePlugin({ name: 'sources' });
