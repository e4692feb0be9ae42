// Prints one line per failed test (or failed file, when a file failed before its tests ran)
// from a vitest JSON report: .ci/run repeats them at the end of the log, because the log's
// tail is often all a reader of a CI run gets to see.
// Usage: node .ci/failed-tests.js <vitest.json> <label>
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const label = process.argv[3] ?? '';
const firstLine = (text) => String(text ?? '').split('\n').find((line) => line.trim() !== '')?.slice(0, 300) ?? '';
for (const file of report.testResults ?? []) {
  const name = file.name.replace(process.cwd() + '/', '');
  const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
  for (const test of failed) console.log(`  ${label} FAILED ${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  if (failed.length === 0 && file.status === 'failed') console.log(`  ${label} FAILED ${name}: ${firstLine(file.message)}`);
}
