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
    if (!template) return { ok: false, why: `no path ${path} in the document` };
    const op = doc.paths[template]![method.toLowerCase()];
    if (!op) return { ok: false, why: `no ${method} ${template} in the document` };
    let response = op.responses[String(status)];
    if (!response) return { ok: false, why: `no ${status} response for ${method} ${template}` };
    let pointer = `doc#/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${status}`;
    if (response.$ref) {
      const name = response.$ref.replace('#/components/responses/', '');
      response = doc.components?.responses?.[name] ?? {};
      pointer = `doc#/components/responses/${name}`;
    }
    const content = response.content?.['application/json'];
    if (!content) return { ok: body === undefined, why: 'the document promises no body' };
    pointer += '/content/application~1json/schema';
    const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
    const ok = validate(body) as boolean;
    return { ok, why: ok ? '' : ajv.errorsText(validate.errors) };
  };
}
