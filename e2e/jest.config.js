import { jestConfig } from '../jest.preset.js';

const config = jestConfig('e2e');

export default {
  ...config,
  // faults/ is a project of its own (the tools layer).
  testPathIgnorePatterns: [...config.testPathIgnorePatterns, '<rootDir>/faults/'],
  // One embedded marketplace for the files that can share it (src/harness/shared-marketplace.ts).
  globalSetup: '<rootDir>/jest.global-setup.js',
  globalTeardown: '<rootDir>/jest.global-teardown.js',
};
