/**
 * Public surface of the control-panel plugin: a web page at `control_panel.path` to browse
 * and edit every stream through the public API (docs/control-panel.md).
 */
export { controlPanelPlugin as default } from './plugin.js';
export { controlPanelSettings, type ControlPanelSettings } from './settings.js';
