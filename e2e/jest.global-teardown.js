// Stops the marketplace jest.global-setup.js started (jest shares globalThis between the two).
export default async function stopShared() {
  await globalThis.sharedE2eMarketplace?.stop();
}
