/**
 * Public surface of the openapi plugin: a live OpenAPI 3.1 document of each interface
 * (`GET <prefix>/openapi.json`) and a reference page (`GET <prefix>/docs`). Field types
 * describe their values through `FieldType.jsonSchema`; core types have defaults here.
 */
export { openapiPlugin as default } from './plugin.js';
