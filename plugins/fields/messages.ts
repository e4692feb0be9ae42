import type { ErrorElement } from '../../kernel/index.js';

/**
 * Laravel's displayable attribute: the handle with underscores as spaces
 * (`episode_id` -> `episode id`); nested paths keep their dots (`tags.1`).
 */
export function attributeName(path: string): string {
  return path.replace(/_/g, ' ');
}

/** Replace `:0`, `:1` ... and `:values` (every argument) in a rule message. */
export function fillArgs(template: string, args: string[]): string {
  if (args.length === 0 || !template.includes(':')) return template;
  return template
    .replace(/:values\b/g, args.join(', '))
    .replace(/:(\d+)/g, (whole, index: string) => args[Number(index)] ?? whole);
}

/** One error element: `{message, meta: {field, rule}}` with `:attribute` filled. */
export function errorElement(template: string, field: string, rule: string): ErrorElement {
  return { message: template.replace(/:attribute\b/g, attributeName(field)), meta: { field, rule } };
}

export const REQUIRED_MESSAGE = 'The :attribute field is required.';
export const PRESENT_MESSAGE = 'The :attribute field must be present.';
export const FILLED_MESSAGE = 'The :attribute field must have a value.';
export const INVALID_MESSAGE = 'The :attribute field is invalid.';
