import { defineSettings } from '../../kernel/index.js';

/** The `control_panel` section: the web page to browse and edit every stream (docs/control-panel.md). */
export interface ControlPanelSettings {
  enabled: boolean;
  /** Where the page is served (`/admin`). */
  path: string;
  /** The API interface the page talks to, by its prefix (`api`); null: the first interface. */
  api_prefix: string | null;
  /** Middleware specs (as in `api.middleware`) run before the page's files are served. */
  middleware: string[];
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    control_panel: ControlPanelSettings;
  }
}

export const controlPanelSettings = defineSettings({
  key: 'control_panel',
  schema: {
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: {
      enabled: { type: 'boolean', default: false },
      path: { type: 'string', pattern: '^/[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$', default: '/admin' },
      api_prefix: { type: ['string', 'null'], pattern: '^[A-Za-z0-9._~/-]*$', default: null },
      middleware: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    },
  },
});
