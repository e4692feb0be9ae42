import { BadRequestError, KeyedLock, ValidationError, type Hooks } from '../../kernel/index.js';
import type { EntryAttributes, EntryLookup, FieldsService } from '../fields/index.js';
import { keyId, type Entry, type EntryKey, type Source } from '../sources/index.js';
import { castKey, existingKey, keyNameOf, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import type { WriteCondition } from './contracts.js';
import type { EntryHookPayload } from './hooks.js';
import { runAfterHook, runVetoHook } from './hook-runner.js';
import type { KeyGenerator } from './key-generator.js';
import { checkCondition } from './preconditions.js';

const FORBIDDEN_ATTRIBUTES = ['__proto__', 'constructor', 'prototype'];

/** What the write pipeline reads: definitions, field types, sources, hooks, keys and lookups. */
export interface WriteContext {
  streams: StreamRegistry;
  fields(): FieldsService;
  hooks: Hooks;
  /** The open source of a stream. */
  source(definition: StreamDefinition): Source;
  /** Increment keys (shared with the intake of changes made on disk or by other nodes). */
  keys: KeyGenerator;
  /** What field defaults and rules read of other entries (`unique`, a non-key `increment`). */
  lookup: EntryLookup;
  /** A listener of an after-hook failed: the write stands, the failure is logged. */
  hookFailed(name: string, error: unknown): void;
}

type WriteMode = 'create' | 'replace' | 'patch';

type WriteArgs = [definition: StreamDefinition, source: Source, mode: WriteMode, key: EntryKey, input: EntryAttributes, existing: Entry | undefined, precondition: boolean, condition?: WriteCondition];

/**
 * Every write of an entry, in one order: the key (given, or generated), the entry's lock,
 * a catch-up with an edit made on disk, the preconditions (preconditions.ts), validation and
 * casting by the field types, the veto hooks, the access guard, the durable write (with the
 * WriteIntent a shared store needs), then the after hooks. Writes of one entry never
 * interleave, and `drain` waits for the ones in flight.
 */
export class WritePipeline {
  private readonly locks = new KeyedLock();
  /** Per stream, for streams with a `unique` rule (see `write`). */
  private readonly uniqueWrites = new KeyedLock();
  private writes = 0;
  private drainWaiters: Array<() => void> = [];

  constructor(private readonly context: WriteContext) {}

  async create(stream: string, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes> {
    const definition = this.context.streams.require(stream);
    this.checkInput(input);
    const keyName = keyNameOf(definition);
    const source = this.context.source(definition);
    const given = input[keyName];
    const generated = given === undefined || given === null || given === '';
    const key = generated ? await this.context.keys.generate(definition, source) : castKey(definition, given);
    try {
      return await this.createEntry(definition, source, key, input, condition);
    } catch (error) {
      // A failed create does not consume its number: give it back when no later one was handed out.
      if (generated) this.context.keys.giveBack(source, key);
      throw error;
    }
  }

  private createEntry(definition: StreamDefinition, source: Source, key: EntryKey, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes> {
    const stream = definition.id;
    const keyName = keyNameOf(definition);
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        // A store shared by several processes refuses an existing key itself (insert-only,
        // the same 409): reading first would only add a round trip and decide nothing.
        if (!source.capabilities.atomicWrites || condition) {
          await source.refresh?.(key);
          const existing = await source.get(key);
          checkCondition(condition, existing);
          if (existing) {
            throw new ValidationError([{ message: `The ${keyName} has already been taken.`, meta: { field: keyName, rule: 'unique' } }]);
          }
        }
        return this.write(definition, source, 'create', key, { ...input, [keyName]: key }, undefined, false, condition);
      }),
    );
  }

  /** A PUT (`replace`) or PATCH (`patch`) of one entry; creates it when it does not exist. */
  async update(
    stream: string,
    rawKey: unknown,
    input: EntryAttributes,
    mode: 'replace' | 'patch',
    condition?: WriteCondition,
  ): Promise<{ entry: EntryAttributes; created: boolean }> {
    const definition = this.context.streams.require(stream);
    this.checkInput(input);
    const keyName = keyNameOf(definition);
    const key = castKey(definition, rawKey);
    const source = this.context.source(definition);
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        // Catch up with an edit made on disk first: a PATCH merges into the current
        // version and a stale If-Match is refused rather than applied blind.
        await source.refresh?.(key);
        const existing = await source.get(key);
        checkCondition(condition, existing);
        // The URL segment is the key (decisions: set on the payload as the entry key).
        const payload = { ...input, [keyName]: key };
        const entry = await this.write(definition, source, existing ? mode : 'create', key, payload, existing, condition?.ifMatch !== undefined, condition);
        return { entry, created: !existing };
      }),
    );
  }

  async delete(stream: string, rawKey: unknown, condition?: WriteCondition): Promise<boolean> {
    const definition = this.context.streams.require(stream);
    const key = existingKey(definition, rawKey);
    if (key === undefined) return false;
    const source = this.context.source(definition);
    const hooks = this.context.hooks;
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        await source.refresh?.(key);
        const existing = await source.get(key);
        if (existing) checkCondition(condition, existing);
        if (!existing) return false;
        condition?.guard?.(existing, undefined);
        const payload: EntryHookPayload = { stream, key, entry: { ...existing }, original: existing };
        await runVetoHook(hooks, 'entry.deleting', payload);
        // Applied only to the version read above where the store is shared (WriteIntent).
        const removed = await source.delete(key, { mode: 'delete', previous: existing, precondition: condition?.ifMatch !== undefined });
        await runAfterHook(hooks, 'entry.deleted', { ...payload, origin: 'api' }, (e) => this.context.hookFailed('entry.deleted', e));
        return removed;
      }),
    );
  }

  /** Resolves once every write started so far is over (the sources' own drain comes after). */
  async drain(): Promise<void> {
    if (this.writes > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    await this.locks.idle();
  }

  /** Validate, run the hooks and store one entry (called under the entry's lock). */
  private write(...args: WriteArgs): Promise<EntryAttributes> {
    // `unique` is a check across entries: two writes of different keys must not both
    // pass it before either is stored. Such streams write one entry at a time (this
    // lock is always taken after the entry's own, so the order cannot deadlock).
    // The same holds for a non-key `increment` default (the next number is read, then written).
    const definition = args[0];
    if (!hasUniqueRule(definition) && !hasFieldIncrement(definition)) return this.writeEntry(...args);
    return this.uniqueWrites.run(definition.id, () => this.writeEntry(...args));
  }

  private async writeEntry(...[definition, source, mode, key, input, existing, precondition, condition]: WriteArgs): Promise<EntryAttributes> {
    const keyName = keyNameOf(definition);
    const prepared = await this.context.fields().prepare(definition, input, { mode, existing, key, lookup: this.context.lookup });
    const entry: EntryAttributes = mode === 'patch' && existing ? { ...existing, ...prepared } : { ...prepared };
    entry[keyName] = key;
    // What the caller may not see or write survives a replace (issue #28).
    if (mode === 'replace' && existing && condition?.keep) for (const name of condition.keep) if (Object.hasOwn(existing, name)) entry[name] = existing[name];
    const payload: EntryHookPayload = { stream: definition.id, key, entry, original: existing };
    const hooks = this.context.hooks;
    await runVetoHook(hooks, 'entry.saving', payload);
    await runVetoHook(hooks, existing ? 'entry.updating' : 'entry.creating', payload);
    // A listener may have changed the attributes, never the key.
    const stored: Entry = { ...payload.entry, [keyName]: key };
    // Access rules see the entry as it would be stored: defaults and hook changes included.
    condition?.guard?.(existing, stored);
    // The intent lets a shared store apply the write to the version it was decided on (WriteIntent).
    const saved = await source.put(key, stored, { mode, previous: existing, precondition });
    this.context.keys.stored(source, key);
    const done: EntryHookPayload = { stream: definition.id, key, entry: stored, original: existing, origin: 'api' };
    await runAfterHook(hooks, existing ? 'entry.updated' : 'entry.created', done, (e) => this.context.hookFailed('created/updated', e));
    await runAfterHook(hooks, 'entry.saved', done, (e) => this.context.hookFailed('entry.saved', e));
    // Hand back the stored object itself so its serialized JSON is cached by identity.
    return saved ?? (await source.get(key)) ?? stored;
  }

  private checkInput(input: EntryAttributes): void {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new BadRequestError('The entry must be a JSON object.');
    for (const name of FORBIDDEN_ATTRIBUTES) {
      if (Object.hasOwn(input, name)) throw new BadRequestError(`"${name}" is not a valid field name.`, { field: name });
    }
  }

  private lockId(stream: string, key: EntryKey): string {
    return `${stream}\u0000${keyId(key)}`;
  }

  private async tracked<T>(task: () => Promise<T>): Promise<T> {
    this.writes++;
    try {
      return await task();
    } finally {
      if (--this.writes === 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const wake of waiters) wake();
      }
    }
  }
}

const uniqueStreams = new WeakMap<StreamDefinition, boolean>();

/** Whether any field of the stream carries `unique` (flag, field rules or stream rules); once per definition. */
function hasUniqueRule(definition: StreamDefinition): boolean {
  let found = uniqueStreams.get(definition);
  if (found === undefined) {
    const isUnique = (rule: string): boolean => rule === 'unique' || rule.startsWith('unique:');
    found = definition.fields.some((f) => f.unique || f.rules.some(isUnique)) || Object.values(definition.rules).some((rules) => rules.some(isUnique));
    uniqueStreams.set(definition, found);
  }
  return found;
}

const incrementStreams = new WeakMap<StreamDefinition, boolean>();

/** Whether a non-key field defaults to `increment` (its next number is read, then written); once per definition. */
function hasFieldIncrement(definition: StreamDefinition): boolean {
  let found = incrementStreams.get(definition);
  if (found === undefined) {
    found = definition.fields.some((f) => f.handle !== keyNameOf(definition) && f.config.default === 'increment');
    incrementStreams.set(definition, found);
  }
  return found;
}
