import { jestConfig } from '../jest.preset.js';

export default jestConfig('e2e');
