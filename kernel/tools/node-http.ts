/**
 * node:http without its ES module facade. An `import ... from 'node:http'` makes Node 22+
 * build a facade that reads every export, and node:http's lazy `WebSocket`/`EventSource`
 * getters then load the whole internal undici: about 25 ms of every boot on Node 22, 24 and
 * 26 (3 ms on Node 20), whether or not the node:http transport serves. `getBuiltinModule`
 * (Node 20.16+, 22.3+) hands over the CommonJS exports, whose getters stay lazy. Type-only
 * imports of node:http are erased and cost nothing.
 */
export const nodeHttp = process.getBuiltinModule('node:http');
