/**
 * The two-node cases of issue #15 (item 8), run by two-kernels.test.ts on the stand-in
 * replica set and by real-server.test.ts on MONGODB_URL: two kernels (two nodes, real
 * HTTP) on one database. Every case asserts the final stored state, read from the
 * database itself, not only statuses. Cases that need the server to hold or fail one
 * operation on demand (fault injection) run on the stand-in only.
 */
import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { StartAppOptions, TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import type { StandInServer } from './fake-server.js';

/** One run's database and nodes. */
export interface TwoNodeEnv {
  nodes: TestApp[];
  /** The documents of a collection as stored now. */
  stored(collection: string): Promise<Document[]>;
  /** Hold every `op` for `ms` at the server (stand-in; a no-op on a real server). */
  delay(op: string, ms: number): void;
  drop(collection: string): Promise<void>;
  uniqueIndexFields(collection: string): Promise<string[]>;
  /** Present on the driver-level stand-in: holding an operation, counting round trips. */
  standIn?: StandInServer;
  /** Present on both stand-ins (fake-server.ts, test/wire/server.ts): what a deployment does wrong. */
  faults?: ClusterFaults;
}

/** The faults both stand-ins can inject, so their cases run on either. */
export interface ClusterFaults {
  /** The oplog rolls over: resume tokens so far are 286. */
  forgetHistory(): void;
  /** The change streams of `collection` fail at their next getMore with `code`. */
  breakStreams(code: number, collection: string): void;
  /** The primary steps down (`false`) or is elected again. */
  setPrimary(primary: boolean): void;
}

export interface TwoNodeBackend {
  /** `[stand-in]` or `[real server]`: every test title says which it ran on. */
  label: string;
  /** It injects the ClusterFaults (the stand-ins; not a real server). */
  faults?: boolean;
  /** Start nodes on a fresh database; closed and dropped after the test. */
  start(count: number, options: StartAppOptions & { definitionsInDatabase?: boolean }): Promise<TwoNodeEnv>;
}

export function twoNodeCases(backend: () => TwoNodeBackend): void {
  const label = backend().label;
  const faultIt = backend().label === '[stand-in]' ? it : it.skip;
  const faultsIt = backend().faults ? it : it.skip;

  const fields = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, 'string']));
  const streams = {
    films: { name: 'Films', config: { source: { type: 'database' } }, fields: { id: { type: 'integer', config: { default: 'increment' } }, title: 'string', year: 'integer' } },
    wide: { name: 'Wide', config: { source: { type: 'database' } }, fields: { id: 'integer', ...fields } },
    // Unique through `rules` only (not `unique: true`): the index must exist all the same.
    people: { name: 'People', config: { source: { type: 'database' } }, fields: { id: { type: 'integer', config: { default: 'increment' } }, email: 'string' }, rules: { email: ['unique'] } },
  };


  describe(`two kernels on one replica set ${label}: entries`, () => {
    it(`${label} the same key created on both nodes: one 201, one 409, the winner stored`, async () => {
      const env = await backend().start(2, { streams });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      // Both creates are in flight together (a read-then-write protocol reads "missing" on both).
      env.delay('insertOne', 20);
      env.delay('findOne', 20);
      env.delay('replaceOne', 20);
      for (let key = 1; key <= 5; key++) {
        const [ra, rb] = await Promise.all([
          a.request('POST', '/api/streams/films/entries', { id: key, title: `A${key}` }),
          b.request('POST', '/api/streams/films/entries', { id: key, title: `B${key}` }),
        ]);
        expect([ra.status, rb.status].sort()).toEqual([201, 409]);
        const loser = ra.status === 409 ? ra : rb;
        expect(loser.json.errors[0]).toEqual({ message: 'The id has already been taken.', meta: { field: 'id', rule: 'unique' } });
        const docs = (await env.stored('films')).filter((d) => d._id === key);
        expect(docs).toHaveLength(1);
        expect(docs[0]!.title).toBe(ra.status === 201 ? `A${key}` : `B${key}`);
      }
    });

    it(`${label} 50 concurrent PATCHes of different fields through both nodes all survive`, async () => {
      const env = await backend().start(2, { streams });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      expect((await a.request('POST', '/api/streams/wide/entries', { id: 1 })).status).toBe(201);
      env.delay('findOneAndUpdate', 3);
      env.delay('findOne', 2);
      const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).request('PATCH', '/api/streams/wide/entries/1', { [`f${i}`]: `v${i}` })));
      expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200));
      const [doc] = await env.stored('wide');
      for (let i = 0; i < 50; i++) expect(doc![`f${i}`], `f${i}`).toBe(`v${i}`);
      expect(doc!._rev).toBe(51); // one revision per write, none lost
      const read = await b.request('GET', '/api/streams/wide/entries/1');
      expect(Object.keys(read.json.data)).toHaveLength(51);
    });

    it(`${label} PATCH racing DELETE: the entry is either gone or holds the patch, never an old version brought back`, async () => {
      const env = await backend().start(2, { streams });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      // Each write is held at the server after its read: the two requests interleave.
      env.delay('findOne', 3);
      env.delay('findOneAndUpdate', 15);
      env.delay('replaceOne', 15);
      const outcomes = new Set<string>();
      for (let key = 1; key <= 12; key++) {
        expect((await a.request('POST', '/api/streams/films/entries', { id: key, title: 'old', year: 1999 })).status).toBe(201);
        const [patch, del] = await Promise.all([
          a.request('PATCH', `/api/streams/films/entries/${key}`, { title: 'patched' }),
          key % 3 === 0
            ? new Promise<void>((r) => setTimeout(r, 2)).then(() => b.request('DELETE', `/api/streams/films/entries/${key}`))
            : b.request('DELETE', `/api/streams/films/entries/${key}`),
        ]);
        const doc = (await env.stored('films')).find((d) => d._id === key);
        outcomes.add(`${patch.status}/${del.status}/${doc ? 'present' : 'absent'}`);
        if (!doc) {
          expect(del.status).toBe(204);
          expect([200, 409]).toContain(patch.status);
        } else if (del.status === 409) {
          // The PATCH changed the revision the DELETE was decided on: the patched entry stays whole.
          expect(patch.status).toBe(200);
          expect(doc).toMatchObject({ title: 'patched', year: 1999 });
        } else {
          // Deleted first, then the PATCH created a new entry (PATCH on a missing key creates):
          // nothing of the deleted version comes back.
          expect(del.status).toBe(204);
          expect(patch.status).toBe(201);
          expect(doc.title).toBe('patched');
          expect(doc).not.toHaveProperty('year');
        }
      }
      expect(outcomes.size).toBeGreaterThan(0);
    });

    it(`${label} DELETE racing DELETE: one 204, one 404, the entry gone`, async () => {
      const env = await backend().start(2, { streams });
      const [a, b] = env.nodes as [TestApp, TestApp];
      env.delay('findOne', 10); // both read the entry before either deletes
      for (let key = 1; key <= 5; key++) {
        expect((await a.request('POST', '/api/streams/films/entries', { id: key, title: 'x' })).status).toBe(201);
        const replies = await Promise.all([a.request('DELETE', `/api/streams/films/entries/${key}`), b.request('DELETE', `/api/streams/films/entries/${key}`)]);
        expect(replies.map((r) => r.status).sort()).toEqual([204, 404]);
        expect((await env.stored('films')).some((d) => d._id === key)).toBe(false);
      }
    });

    it(`${label} unique values racing on two nodes (a unique rule, not unique: true): exactly one stored`, async () => {
      const env = await backend().start(2, { streams });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      // Indexes build in the background at open: the cross-node guarantee starts once built.
      await eventually(async () => expect(await env.uniqueIndexFields('people')).toEqual(['email']));
      env.delay('insertOne', 15); // both nodes pass the rule's read before either inserts
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).request('POST', '/api/streams/people/entries', { email: 'same@example.com' })));
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toEqual([201, ...Array(9).fill(409)]);
      for (const r of replies.filter((x) => x.status === 409)) expect(r.json.errors[0].meta).toEqual({ field: 'email', rule: 'unique' });
      expect((await env.stored('people')).filter((d) => d.email === 'same@example.com')).toHaveLength(1);
    });

    faultIt(`${label} PUT and DELETE apply only to the version they were decided on; If-Match loses a race with 412`, async () => {
      const env = await backend().start(2, { streams });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      const created = await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'one', year: 1 });
      const etag = created.headers.etag as string;
      const server = env.standIn!;
      const arrived = (n: number) => eventually(async () => expect(server.ops.get('replaceOne') ?? 0).toBe(n));
      // B writes between A's read and A's write: A's write is held at the server until then.
      let release = server.hold('replaceOne');
      const put = a.request('PUT', '/api/streams/films/entries/1', { title: 'from A' }, { 'if-match': etag });
      await arrived(1);
      const patched = await b.request('PATCH', '/api/streams/films/entries/1', { year: 2 });
      expect(patched.status).toBe(200);
      release();
      expect((await put).status).toBe(412);
      expect((await env.stored('films'))[0]).toMatchObject({ title: 'one', year: 2 });
      // Without If-Match a lost race is a 409, and nothing is written either.
      release = server.hold('replaceOne');
      const put2 = a.request('PUT', '/api/streams/films/entries/1', { title: 'blind' });
      await arrived(2);
      expect((await b.request('PATCH', '/api/streams/films/entries/1', { year: 3 })).status).toBe(200);
      release();
      const lost = await put2;
      expect(lost.status).toBe(409);
      expect(lost.json.errors[0].message).toMatch(/changed or deleted by another request/);
      expect((await env.stored('films'))[0]).toMatchObject({ title: 'one', year: 3 });
    });

    faultIt(`${label} one round trip per write on integer keys (create with an explicit key, PATCH, PUT, DELETE after their read)`, async () => {
      const env = await backend().start(1, { streams });
      const nodes = env.nodes;
      const [a] = nodes as [TestApp];
      await a.request('POST', '/api/streams/wide/entries', { id: 1 });
      const count = (): number => [...env.standIn!.ops.values()].reduce((x, y) => x + y, 0);
      let before = count();
      expect((await a.request('POST', '/api/streams/wide/entries', { id: 1 - 1 })).status).toBe(201);
      expect(count() - before).toBe(1); // insertOne (0 is below the counter this node raised)
      before = count();
      expect((await a.request('PATCH', '/api/streams/wide/entries/1', { f1: 'x' })).status).toBe(200);
      expect(count() - before).toBe(2); // the read the PATCH is validated on, then findOneAndUpdate
      before = count();
      expect((await a.request('DELETE', '/api/streams/wide/entries/1')).status).toBe(204);
      expect(count() - before).toBe(2); // the read the hooks see, then the conditional deleteOne
    });
  });

  describe(`two kernels on one replica set ${label}: definitions, failures, recovery`, () => {
    const film = (name: string): Record<string, unknown> => ({ name, config: { source: { type: 'database' } }, fields: { id: 'integer', title: 'string' } });

    it(`${label} a definition burst on A is seen by B, final versions included`, async () => {
      const env = await backend().start(2, { definitionsInDatabase: true });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      await eventually(async () => expect((await b.request('GET', '/readyz')).status).toBe(200));
      for (let i = 0; i < 8; i++) expect((await a.request('POST', '/api/streams', { id: `s${i}`, ...film(`v1 ${i}`) })).status).toBe(201);
      for (let i = 0; i < 8; i++) expect((await a.request('PATCH', `/api/streams/s${i}`, { name: `v2 ${i}` })).status).toBe(200);
      expect((await a.request('DELETE', '/api/streams/s7')).status).toBe(204);
      await eventually(async () => {
        for (let i = 0; i < 7; i++) expect((await b.request('GET', `/api/streams/s${i}`)).json.data.name).toBe(`v2 ${i}`);
        expect((await b.request('GET', '/api/streams/s7')).status).toBe(404);
      });
      expect((await env.stored('core_streams')).map((d) => d._id).sort()).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6']);
      // A create of an id the other node just created is decided in the database: 409, one stored.
      const [ca, cb] = await Promise.all([a.request('POST', '/api/streams', { id: 'twin', ...film('A') }), b.request('POST', '/api/streams', { id: 'twin', ...film('B') })]);
      expect([ca.status, cb.status].sort()).toEqual([201, 409]);
      const twin = (await env.stored('core_streams')).filter((d) => d._id === 'twin');
      expect(twin).toHaveLength(1);
      expect(JSON.parse(twin[0]!.json as string).name).toBe(ca.status === 201 ? 'A' : 'B');
      await eventually(async () => expect((await a.request('GET', '/api/streams/twin')).json.data.name).toBe((await b.request('GET', '/api/streams/twin')).json.data.name));
    });

    it(`${label} a dropped core_streams is noticed (drop, invalidate): full reload, then B watches again`, async () => {
      const env = await backend().start(2, { definitionsInDatabase: true });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      await eventually(async () => expect((await b.request('GET', '/readyz')).status).toBe(200));
      expect((await a.request('POST', '/api/streams', { id: 'before', ...film('before') })).status).toBe(201);
      await eventually(async () => expect((await b.request('GET', '/api/streams/before')).status).toBe(200));
      await env.drop('core_streams');
      await eventually(async () => expect((await b.request('GET', '/api/streams/before')).status).toBe(404));
      await eventually(async () => expect((await a.request('GET', '/api/streams/before')).status).toBe(404));
      expect((await a.request('POST', '/api/streams', { id: 'after', ...film('after') })).status).toBe(201);
      await eventually(async () => expect((await b.request('GET', '/api/streams/after')).json.data.name).toBe('after'));
      expect((await env.stored('core_streams')).map((d) => d._id)).toEqual(['after']);
    });

    for (const code of [286, 280]) {
      faultsIt(`${label} change-stream error ${code}: B reloads everything (changes made meanwhile included) and watches again`, async () => {
        const env = await backend().start(2, { definitionsInDatabase: true });
        const nodes = env.nodes;
        const [a, b] = nodes as [TestApp, TestApp];
        await eventually(async () => expect((await b.request('GET', '/readyz')).status).toBe(200));
        expect((await a.request('POST', '/api/streams', { id: 'x', ...film('x1') })).status).toBe(201);
        await eventually(async () => expect((await b.request('GET', '/api/streams/x')).status).toBe(200));
        // The history rolls over and B's stream fails: its token is useless.
        env.faults!.forgetHistory();
        env.faults!.breakStreams(code, 'core_streams');
        expect((await a.request('PATCH', '/api/streams/x', { name: 'x2' })).status).toBe(200);
        await eventually(async () => expect((await b.request('GET', '/api/streams/x')).json.data.name).toBe('x2'));
        // Watching again: a later change arrives too.
        expect((await a.request('PATCH', '/api/streams/x', { name: 'x3' })).status).toBe(200);
        await eventually(async () => expect((await b.request('GET', '/api/streams/x')).json.data.name).toBe('x3'));
        expect(JSON.parse((await env.stored('core_streams'))[0]!.json as string).name).toBe('x3');
      });
    }

    faultsIt(`${label} a resume after the history rolled over gets 286 and falls back to a full reload`, async () => {
      const env = await backend().start(2, { definitionsInDatabase: true });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      await eventually(async () => expect((await b.request('GET', '/readyz')).status).toBe(200));
      expect((await a.request('POST', '/api/streams', { id: 'y', ...film('y1') })).status).toBe(201);
      await eventually(async () => expect((await b.request('GET', '/api/streams/y')).status).toBe(200));
      env.faults!.breakStreams(6, 'core_streams'); // a network error: B resumes from its token...
      expect((await a.request('PATCH', '/api/streams/y', { name: 'y2' })).status).toBe(200);
      env.faults!.forgetHistory(); // ...which the history no longer holds
      await eventually(async () => expect((await b.request('GET', '/api/streams/y')).json.data.name).toBe('y2'));
    });

    faultsIt(`${label} no primary: 503 with Retry-After within the selection timeout, /readyz not ready; recovery: ready, writes, B follows again`, async () => {
      const env = await backend().start(2, { definitionsInDatabase: true });
      const nodes = env.nodes;
      const [a, b] = nodes as [TestApp, TestApp];
      await eventually(async () => expect((await b.request('GET', '/readyz')).status).toBe(200));
      expect((await a.request('POST', '/api/streams', { id: 'z', ...film('z1') })).status).toBe(201);
      await eventually(async () => expect((await b.request('POST', '/api/streams/z/entries', { id: 1, title: 'one' })).status).toBe(201));

      env.faults!.setPrimary(false);
      const started = Date.now();
      const [read, write] = await Promise.all([a.request('GET', '/api/streams/z/entries'), b.request('PATCH', '/api/streams/z/entries/1', { title: 'lost?' })]);
      const elapsed = Date.now() - started;
      for (const reply of [read, write]) {
        expect(reply.status).toBe(503);
        expect(reply.headers['retry-after']).toBe('2');
      }
      // Bounded by the selection timeout (300 ms here), never a hang: a generous bound for a loaded CI.
      expect(elapsed).toBeLessThan(5000);
      for (const node of [a, b]) {
        const ready = await node.request('GET', '/readyz');
        expect(ready.status).toBe(503);
        expect(ready.json.checks.mongodb).toBe(false);
      }
      expect((await env.stored('z'))[0]).toMatchObject({ title: 'one' });

      env.faults!.setPrimary(true);
      for (const node of [a, b]) await eventually(async () => expect((await node.request('GET', '/readyz')).status).toBe(200));
      expect((await b.request('PATCH', '/api/streams/z/entries/1', { title: 'after' })).status).toBe(200);
      expect((await env.stored('z'))[0]).toMatchObject({ title: 'after' });
      expect((await a.request('PATCH', '/api/streams/z', { name: 'z2' })).status).toBe(200);
      await eventually(async () => expect((await b.request('GET', '/api/streams/z')).json.data.name).toBe('z2'));
    });
  });
}
