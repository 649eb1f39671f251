import { jestConfig } from '../jest.preset.js';

const config = jestConfig('e2e');

export default {
  ...config,
  // faults/ is a project of its own (the tools layer).
  testPathIgnorePatterns: [...config.testPathIgnorePatterns, '<rootDir>/faults/'],
};
