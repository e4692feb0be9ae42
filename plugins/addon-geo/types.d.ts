/**
 * What this addon adds to the kernel's types, by augmentation (as a TypeScript addon would
 * next to its code): its top-level config section and the hook it emits. Editors and
 * `npm run typecheck` then check `config.geo` and `hooks.on('geo.rounded', ...)` like the
 * kernel's own.
 */
import 'streams-kernel/addon';

declare module 'streams-kernel/addon' {
  interface ConfigSections {
    /** `"geo": { "precision": 6 }` in the application's config file. */
    geo: { precision: number };
  }
  interface HookMap {
    /** A geopoint was stored with fewer decimals than it was sent with. */
    'geo.rounded': { stream: string; field: string; sent: { lat: number; lng: number }; stored: { lat: number; lng: number } };
  }
}
