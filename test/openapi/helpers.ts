import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Response = { $ref?: string; content?: Record<string, { schema: unknown }> };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, Response> }>>; components?: { responses?: Record<string, Response> } };

/** The document's path template for a concrete path (`/api/streams/books/entries/3` -> `.../entries/{key}`). */
export function templateOf(doc: Doc, path: string): string | undefined {
  if (doc.paths[path]) return path;
  const parts = path.split('/');
  for (const template of Object.keys(doc.paths)) {
    const t = template.split('/');
    if (t.length === parts.length && t.every((seg, i) => seg.startsWith('{') || seg === parts[i])) return template;
  }
  return undefined;
}

/**
 * A validator of response bodies against the document: every schema is reached through a
 * JSON pointer into the document itself (added to ajv as one schema), so `$ref`s resolve.
 */
export function responseValidator(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc as object, 'doc');
  return (method: string, path: string, status: number, body: unknown): { ok: boolean; why: string } => {
    const template = templateOf(doc, path);
    const op = template === undefined ? undefined : doc.paths[template]![method.toLowerCase()];
    if (!op || template === undefined) {
      // A path or method the interface does not serve: its 404/405 is still the error envelope.
      if (status === 404 || status === 405 || status === 401 || status === 403) return check(ajv, 'doc#/components/schemas/ErrorEnvelope', body);
      return { ok: false, why: template ? `no ${method} ${template} in the document` : `no path ${path} in the document` };
    }
    const code = op.responses[String(status)] ? String(status) : status >= 400 && op.responses.default ? 'default' : undefined;
    if (code === undefined) return { ok: false, why: `no ${status} response for ${method} ${template}` };
    let response = op.responses[code]!;
    let pointer = `doc#/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${code}`;
    if (response.$ref) {
      const name = response.$ref.replace('#/components/responses/', '');
      response = doc.components?.responses?.[name] ?? {};
      pointer = `doc#/components/responses/${name}`;
    }
    const content = response.content?.['application/json'];
    if (!content) return { ok: body === undefined, why: 'the document promises no body' };
    pointer += '/content/application~1json/schema';
    return check(ajv, pointer, body);
  };
}

function check(ajv: Ajv2020, pointer: string, body: unknown): { ok: boolean; why: string } {
  const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
  const ok = validate(body) as boolean;
  return { ok, why: ok ? '' : ajv.errorsText(validate.errors) };
}
