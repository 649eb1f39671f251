import type { SearchDocument } from '@marketplace/search';
import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';

/**
 * Realistic generated listings for the catalog bench: titles as liquidation sellers write them (brand, product,
 * model number, specs, lot size), per category, every category and condition present, deterministic by seed.
 * The field names are the catalog's read model (`CatalogProduct` of services/catalog), which the bench writes
 * straight into its products table.
 */
export interface GeneratedListing {
  readonly id: string;
  readonly sellerAccountId: number;
  readonly title: string;
  readonly description: string;
  readonly sku: string;
  readonly category: string;
  readonly condition: string;
  readonly priceCents: number;
  readonly currency: string;
  readonly quantity: number;
  readonly minOrderQuantity: number;
  readonly minQuoteQuantity: number;
  readonly brand: string;
  readonly imageUrls: readonly string[];
  readonly originalRetailPriceCents?: number;
  readonly instantCheckout: boolean;
  readonly promotePublicly: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly version: number;
}

const PRODUCTS: Record<string, { brands: string[]; items: string[]; specs: string[] }> = {
  electronics: {
    brands: ['Dell', 'HP', 'Lenovo', 'Apple', 'Samsung', 'Sony', 'Anker', 'Logitech', 'Acer', 'Asus'],
    items: [
      'Laptop',
      'Monitor',
      'Wireless Earbuds',
      'Tablet',
      'USB-C Charger',
      'Keyboard',
      'Webcam',
      'Smartphone',
    ],
    specs: [
      'i5-8250U 8GB RAM 256GB SSD',
      '24" 1080p IPS',
      '65W GaN',
      'Bluetooth 5.3',
      '128GB Wi-Fi',
      'i7-1165G7 16GB',
    ],
  },
  apparel: {
    brands: ['Nike', 'Adidas', "Levi's", 'Columbia', 'Hanes', 'Carhartt', 'Under Armour', 'Gap'],
    items: [
      "Men's Jeans",
      "Women's Hoodie",
      'T-Shirts',
      'Winter Jacket',
      'Running Shorts',
      'Socks',
      'Polo Shirts',
    ],
    specs: ['assorted sizes S-XL', 'cotton blend', 'size M', 'mixed colours', 'waterproof', 'slim fit'],
  },
  home_goods: {
    brands: ['IKEA', 'Mainstays', 'Better Homes', 'Umbra', 'Simplehuman', 'Threshold'],
    items: [
      'Bath Towels',
      'Throw Pillows',
      'Curtains',
      'Table Lamp',
      'Storage Bins',
      'Bed Sheets',
      'Wall Mirror',
    ],
    specs: ['queen size', 'set of 4', 'grey', '100% cotton', 'blackout 84"', 'LED'],
  },
  beauty: {
    brands: ["L'Oreal", 'Maybelline', 'Neutrogena', 'CeraVe', 'Olay', 'Revlon', 'Dove'],
    items: ['Moisturizer', 'Mascara', 'Shampoo', 'Sunscreen SPF 50', 'Lipstick', 'Face Serum', 'Body Lotion'],
    specs: ['12 oz', 'assorted shades', 'travel size', 'unscented', 'case of 24', 'sealed'],
  },
  sports: {
    brands: ['Wilson', 'Spalding', 'Coleman', 'Bowflex', 'Yeti', 'Callaway', 'Everlast'],
    items: [
      'Basketballs',
      'Yoga Mats',
      'Dumbbells',
      'Camping Tent',
      'Golf Balls',
      'Water Bottles',
      'Boxing Gloves',
    ],
    specs: ['official size', '6mm', 'pair 20 lb', '4-person', 'dozen', '32 oz insulated'],
  },
  kitchenware: {
    brands: ['KitchenAid', 'Cuisinart', 'Pyrex', 'Lodge', 'OXO', 'Instant Pot', 'Ninja'],
    items: [
      'Stand Mixer',
      'Cast Iron Skillet',
      'Food Storage Set',
      'Pressure Cooker',
      'Knife Set',
      'Blender',
    ],
    specs: ['5 qt', '12"', '18-piece', '6 qt', 'stainless steel', '1000W'],
  },
  office_supplies: {
    brands: ['Staples', 'Post-it', 'BIC', 'Sharpie', 'Avery', 'Swingline', 'HON'],
    items: [
      'Office Chairs',
      'Copy Paper',
      'Ballpoint Pens',
      'Sticky Notes',
      'Staplers',
      'File Folders',
      'Desk',
    ],
    specs: ['ergonomic mesh', '10 reams letter', 'box of 60', '3x3 in', 'heavy duty', 'letter size'],
  },
  toys: {
    brands: ['LEGO', 'Mattel', 'Hasbro', 'Fisher-Price', 'Hot Wheels', 'Nerf', 'Melissa & Doug'],
    items: [
      'Building Set',
      'Board Game',
      'Action Figures',
      'Plush Toys',
      'Die-cast Cars',
      'Puzzle',
      'Dart Blaster',
    ],
    specs: ['ages 6+', '1000 pieces', 'assorted', '5-pack', 'family edition', 'sealed box'],
  },
  food_beverage: {
    brands: ['Nestle', 'Kellogg', 'PepsiCo', 'Keurig', 'Kind', 'Clif', 'Lipton'],
    items: [
      'Coffee Pods',
      'Granola Bars',
      'Sparkling Water',
      'Green Tea',
      'Protein Bars',
      'Cereal',
      'Snack Mix',
    ],
    specs: ['case of 96', 'best before 2027', '12 fl oz cans', '100 bags', 'variety pack', 'gluten free'],
  },
  tools: {
    brands: ['DeWalt', 'Milwaukee', 'Makita', 'Bosch', 'Ryobi', 'Craftsman', 'Stanley'],
    items: [
      'Cordless Drill',
      'Impact Driver',
      'Circular Saw',
      'Socket Set',
      'Tool Box',
      'Tape Measure',
      'Battery',
    ],
    specs: ['20V MAX', '18V brushless', '7-1/4"', '150-piece', 'DCD771C2', '25 ft'],
  },
  other: {
    brands: ['Generic', 'Amazon Basics', 'Unbranded', 'Mixed Brands'],
    items: [
      'Pet Beds',
      'Luggage',
      'Party Supplies',
      'Garden Hoses',
      'Holiday Decor',
      'Umbrellas',
      'Phone Cases',
    ],
    specs: ['mixed lot', 'assorted', 'large', '50 ft', 'seasonal', 'universal'],
  },
};

const LOT_WORDS = ['Pallet of', 'Lot of', 'Case of', 'Truckload of', 'Box of', 'Bulk'];
const CONDITION_NOTES: Record<string, string> = {
  salvage: 'Sold as-is for parts or repair; some units do not power on.',
  customer_returns: 'Customer returns, untested, may have missing accessories.',
  shelf_pulls: 'Shelf pulls, unused, some packaging wear.',
  overstock: 'Brand new overstock in original sealed packaging.',
  new_or_refurbished: 'Certified refurbished or new, tested and graded A.',
};

/** Mulberry32, so every run generates the same catalog from the same seed. */
const seeded = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

const T0 = Date.UTC(2026, 0, 1);

export const generateListings = (count: number, seed = 20261122): GeneratedListing[] => {
  const random = seeded(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const n = i + 1;
    // Round-robin first, so every category and condition is present even in small runs.
    const category = CATEGORIES[i % CATEGORIES.length]!;
    const condition = CONDITIONS[Math.floor(i / CATEGORIES.length) % CONDITIONS.length]!;
    const { brands, items, specs } = PRODUCTS[category]!;
    const brand = pick(brands);
    const item = pick(items);
    const spec = pick(specs);
    const quantity = 1 + Math.floor(random() ** 2 * 2_000);
    const retail = 500 + Math.floor(random() * 150_000);
    const priceCents = Math.max(1, Math.round(retail * (0.05 + random() * 0.6)));
    return {
      id: `product_${n}`,
      sellerAccountId: 1 + (i % 50),
      title: `${pick(LOT_WORDS)} ${quantity} ${brand} ${item} ${spec}`,
      description:
        `${quantity} units of ${brand} ${item.toLowerCase()} (${spec}). ${CONDITION_NOTES[condition]} ` +
        `Ships from ${pick(['Dallas, TX', 'Reno, NV', 'Columbus, OH', 'Newark, NJ', 'Atlanta, GA'])} on ` +
        `${pick(['pallets', 'gaylords', 'cartons'])}; manifest available.`,
      sku: `GEN-${n}`,
      category,
      condition,
      priceCents,
      currency: 'USD',
      quantity,
      minOrderQuantity: 1 + Math.floor(random() * 10),
      minQuoteQuantity: 1,
      brand,
      imageUrls: [`https://images.example/generated/${n}.jpg`],
      ...(random() < 0.8 ? { originalRetailPriceCents: retail } : {}),
      instantCheckout: random() < 0.3,
      promotePublicly: random() < 0.9,
      createdAtMs: T0 + n * 1_000,
      updatedAtMs: T0 + n * 1_000,
      version: 1,
    };
  });
};

/** A listing as the catalog's search index holds it, for measuring the index without the catalog. */
export const searchDocumentOf = (listing: GeneratedListing): SearchDocument<GeneratedListing> => ({
  id: listing.id,
  version: listing.version,
  title: listing.title,
  description: listing.description,
  category: listing.category,
  condition: listing.condition,
  priceCents: listing.priceCents,
  public: listing.promotePublicly,
  createdAtMs: listing.createdAtMs,
  payload: listing,
});

/** Queries a buyer's agent would send, with and without filters; the same list for every layer measured. */
export const benchQueries = (
  count: number,
  seed = 7,
): { q?: string; category?: string; condition?: string }[] => {
  const random = seeded(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: count }, () => {
    const category = pick(CATEGORIES);
    const { brands, items } = PRODUCTS[category]!;
    const shape = random();
    if (shape < 0.4) return { q: `${pick(brands)} ${pick(items)}`.toLowerCase() };
    if (shape < 0.7) return { q: pick(items).toLowerCase(), category };
    if (shape < 0.85) return { q: pick(brands), condition: pick(CONDITIONS) };
    if (shape < 0.95) return { category, condition: pick(CONDITIONS) };
    return { q: 'i5-8250U' };
  });
};
