// One namespace per proto package, so equally named messages in two packages never clash.
export * as commonV1 from './generated/index.marketplace.common.v1.js';
export * as listingV1 from './generated/index.marketplace.listing.v1.js';
export * as catalogV1 from './generated/index.marketplace.catalog.v1.js';
export * as accountV1 from './generated/index.marketplace.account.v1.js';
export * as quoteV1 from './generated/index.marketplace.quote.v1.js';
export * as orderV1 from './generated/index.marketplace.order.v1.js';
export * as subscriptionV1 from './generated/index.marketplace.subscription.v1.js';
