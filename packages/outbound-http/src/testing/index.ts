export { startImageServer, testImageBytes, type ImageServer } from './image-server.js';
export { startStallingServer, type StallingServer, type StallMode } from './stalling-server.js';
