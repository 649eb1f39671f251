import { availableParallelism } from 'node:os';

// testTimeout, maxWorkers and testSequencer are global options: jest ignores them in the projects, so they are set here once.
// The layers are the file names (*.unit.test.ts, *.int.test.ts, *.e2e.test.ts) and, for the tools layer, the
// projects `bench` and `faults`: the root package.json's test:* scripts select them (docs/testing.md).
export default {
  projects: [
    '<rootDir>/packages/*',
    '<rootDir>/services/*',
    '<rootDir>/runner',
    '<rootDir>/e2e',
    '<rootDir>/e2e/faults',
    '<rootDir>/bench',
    '<rootDir>/charts/test',
  ],
  testTimeout: 30_000,
  // Jest's default, one worker less than the cores, is a single worker on two cores. Integration and end-to-end
  // files spend much of their time waiting on PostgreSQL, NATS and child processes, so one worker per core.
  maxWorkers: Math.max(2, availableParallelism()),
  testSequencer: '<rootDir>/jest.sequencer.js',
};
