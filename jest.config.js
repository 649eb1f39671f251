// testTimeout is a global option: jest ignores it in the projects, so it is set here once.
export default {
  projects: [
    '<rootDir>/packages/*',
    '<rootDir>/services/*',
    '<rootDir>/runner',
    '<rootDir>/e2e',
    '<rootDir>/bench',
    '<rootDir>/charts/test',
  ],
  testTimeout: 30_000,
};
