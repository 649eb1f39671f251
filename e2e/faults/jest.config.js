import { jestConfig } from '../../jest.preset.js';

// Its own project (the tools layer, `pnpm test:tools`): the fault campaign's sample, run by the full `pnpm test`.
export default jestConfig('faults');
