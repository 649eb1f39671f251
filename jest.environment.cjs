// The node test environment, with one change: the test's global object is an ordinary object of a fresh V8
// context (`vm.constants.DONT_CONTEXTIFY`, Node ≥ 22.8) instead of a contextified sandbox. Jest contextifies a
// Proxy, so every global lookup in test and application code (Math, Buffer, Array…) went through a C++
// interceptor and the Proxy's traps and was never optimised: a loop calling Math.round ran ~100× slower than in
// production (docs/testing.md, "Why a custom test environment").
const vm = require('node:vm');
const { TestEnvironment } = require('jest-environment-node');

module.exports = class OrdinaryGlobalEnvironment extends TestEnvironment {
  constructor(config, context) {
    const contextify = vm.createContext;
    vm.createContext = () => contextify(vm.constants.DONT_CONTEXTIFY);
    try {
      super(config, context);
    } finally {
      vm.createContext = contextify;
    }
  }
};
