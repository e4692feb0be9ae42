import { definePlugin } from '../../kernel/plugin.js';

export const streamsPlugin = definePlugin({ name: 'streams' });
