export { startImageServer, testImageBytes, type ImageServer } from './image-server.js';
