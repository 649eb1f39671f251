export default {
  projects: ['<rootDir>/packages/*', '<rootDir>/services/*', '<rootDir>/runner', '<rootDir>/e2e'],
};
