// What the file system under the work folder is, for the results' machine line. Durable writes
// and boots moved by 2x with things `stat -f` does not tell (issue #33, docs/decisions.md): ext4
// without a journal scans recently freed inodes on every create, `discard` makes every freed
// block wait for the device, and millions of cached dentries slow every path walk. Linux only
// (/proc); elsewhere, or when anything is unreadable, whatever could be read.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** The options worth naming (the rest are defaults for a benchmark's purpose). */
const NOTABLE = new Set(['discard', 'sync', 'dirsync', 'noatime', 'relatime', 'strictatime', 'lazytime', 'nobarrier', 'barrier=0', 'data=journal', 'data=writeback', 'journal_async_commit']);

/** The /proc/mounts line whose mount point holds `dir` (the longest such point); octal escapes decoded. */
export function mountOf(dir, mountsText) {
  let best = null;
  for (const line of mountsText.split('\n')) {
    const [device, point, type, options] = line.split(' ');
    if (!device || !point || !type) continue;
    const where = point.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
    const inside = where === '/' || dir === where || dir.startsWith(where + path.sep);
    if (inside && (best === null || where.length >= best.point.length)) best = { device, point: where, type, options: (options ?? '').split(',') };
  }
  return best;
}

/**
 * `ext4 (no journal; relatime, discard); cached dentries 2,455,494`, as far as /proc tells.
 * `procRoot` is for the self-test.
 */
export function describeFilesystem(dir, procRoot = '/proc') {
  let real = path.resolve(dir);
  // The work folder may not exist yet: its nearest existing folder is on the same mount, or near enough.
  while (!existsSync(real) && path.dirname(real) !== real) real = path.dirname(real);
  try {
    real = realpathSync(real);
  } catch {
    // kept as it is
  }
  let mounts;
  try {
    mounts = readFileSync(path.join(procRoot, 'mounts'), 'utf8');
  } catch {
    return 'unknown';
  }
  const mount = mountOf(real, mounts);
  if (mount === null) return 'unknown';
  // jbd2 lists one folder per journaled device (`vda-8`): none at all, no journal anywhere; one
  // for this device, a journal. A name that does not match (`/dev/root`, a mapper link not
  // resolved) says nothing either way.
  const journal = mount.type === 'ext4' || mount.type === 'ext3' ? journalOf(mount.device, procRoot) : '';
  const options = mount.options.filter((option) => NOTABLE.has(option)).join(', ');
  const detail = [journal, options].filter((part) => part !== '').join('; ');
  let text = detail === '' ? mount.type : `${mount.type} (${detail})`;
  try {
    const cached = Number(readFileSync(path.join(procRoot, 'sys', 'fs', 'dentry-state'), 'utf8').split(/\s+/)[0]);
    if (Number.isFinite(cached)) text += `; cached dentries ${cached.toLocaleString('en-US')}`;
  } catch {
    // not Linux, or not readable
  }
  return text;
}

/** 'journal', 'no journal', or '' when /proc does not tell for `device`. */
function journalOf(device, procRoot) {
  let name = device;
  try {
    name = realpathSync(device);
  } catch {
    // not a path here (the self-test's fake /proc): its name as listed
  }
  name = path.basename(name);
  const folder = path.join(procRoot, 'fs', 'jbd2');
  let journals;
  try {
    journals = existsSync(folder) ? readdirSync(folder) : [];
  } catch {
    return '';
  }
  if (journals.length === 0) return 'no journal';
  return journals.some((entry) => entry.startsWith(`${name}-`)) ? 'journal' : '';
}
