import { CATEGORIES, CONDITIONS, QUOTE_STATUS_FILTERS } from '@marketplace/vocabulary';
import { JSON_RPC, JsonRpcError } from './json-rpc-error.js';

/** One argument of a prompt, as `prompts/list` describes it. */
export interface PromptArgument {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
}

/** An MCP prompt: a journey through the marketplace's tools, in the order an agent should call them. */
export interface JourneyPrompt {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly arguments: readonly PromptArgument[];
  text(args: Readonly<Record<string, string>>): string;
}

export interface PromptMessages {
  [key: string]: unknown;
  readonly description: string;
  readonly messages: { role: 'user'; content: { type: 'text'; text: string } }[];
}

const optional = (value: string | undefined, phrase: (value: string) => string): string =>
  value === undefined || value === '' ? '' : phrase(value);

const findAndQuote: JourneyPrompt = {
  name: 'find_and_quote_lot',
  title: 'Find and quote a lot',
  description:
    'Search the public lots for a need, compare the best matches and ask the seller of the right one for a quote.',
  arguments: [
    {
      name: 'need',
      description: 'What you are looking for, in plain words (e.g. "USB-C chargers").',
      required: true,
    },
    { name: 'quantity', description: 'How many units you want (a whole number).', required: false },
    { name: 'category', description: `One of ${CATEGORIES.join(', ')}.`, required: false },
    { name: 'condition', description: `One of ${CONDITIONS.join(', ')}.`, required: false },
  ],
  text: (args) =>
    `Find a liquidation lot for: ${args['need']}` +
    optional(args['quantity'], (q) => `, ${q} units`) +
    optional(args['category'], (c) => `, category ${c}`) +
    optional(args['condition'], (c) => `, condition ${c}`) +
    '.\n1. Call search_inventory with the need as query (and category/condition as filters); for a vague need ' +
    'call search_inventory_semantic instead.\n' +
    '2. Call get_product_details on the two or three best matches and compare unit price, stock, condition and ' +
    'the seller.\n' +
    '3. Call request_quote on the best lot with the quantity and a short message; keep the quote_request_id and ' +
    'claim_token it answers.\n' +
    "4. Later, call get_quote_status (or list_my_quotes with a buyer credential) to read the seller's answer; an " +
    'accepted or countered quote is bought with accept_quote_and_pay.',
};

const restock: JourneyPrompt = {
  name: 'restock_from_liquidation',
  title: 'Restock from liquidation',
  description:
    'Restock a product line from surplus lots: buy what fits now, quote what is too large, and watch for new lots.',
  arguments: [
    {
      name: 'product',
      description: 'The product line to restock (e.g. "stainless cookware sets").',
      required: true,
    },
    { name: 'quantity', description: 'Units needed (a whole number).', required: true },
    { name: 'max_unit_price', description: 'Highest acceptable price per unit, in cents.', required: false },
    { name: 'category', description: `One of ${CATEGORIES.join(', ')}.`, required: false },
  ],
  text: (args) =>
    `Restock ${args['quantity']} units of ${args['product']}` +
    optional(args['max_unit_price'], (p) => ` at no more than ${p} cents a unit`) +
    optional(args['category'], (c) => ` (category ${c})`) +
    '.\n1. Call search_inventory_semantic with the product, then search_inventory with its category and a ' +
    'max_price filter.\n' +
    '2. Call get_product_details on each candidate to check stock and condition.\n' +
    "3. For a quantity within a lot's stock and under the bulk threshold on an instant-checkout lot, call " +
    'quick_buy (buyer credential needed); otherwise call request_quote.\n' +
    '4. Call subscribe_to_query with the same search so new matching lots are reported, and follow orders with ' +
    'get_order_status.',
};

const quoteInbox: JourneyPrompt = {
  name: 'answer_quote_inbox',
  title: 'Answer my quote inbox',
  description:
    "Work through a seller's quote requests: read them, price them and accept, counter or decline each.",
  arguments: [
    {
      name: 'status',
      description: `Which requests: ${QUOTE_STATUS_FILTERS.join(', ')} (default pending).`,
      required: false,
    },
    { name: 'quote_request_id', description: 'Answer only this request.', required: false },
  ],
  text: (args) =>
    (args['quote_request_id']
      ? `Answer quote request ${args['quote_request_id']}.`
      : `Answer my ${args['status'] || 'pending'} quote requests.`) +
    " This needs the seller's X-MCP-API-Key.\n" +
    `1. Call seller_inbox_summarise for an overview, then get_quote_requests with status ${args['status'] || 'pending'}.\n` +
    '2. For each request, call get_pricing_recommendation for its product and compare with the requested quantity ' +
    'and the stock.\n' +
    '3. Call respond_to_quote with action accept, counter (with counter_price in cents) or decline, and a short ' +
    'message for the buyer.',
};

export const JOURNEY_PROMPTS: readonly JourneyPrompt[] = [findAndQuote, restock, quoteInbox];

/** `prompts/list`: every prompt in one page. */
export const listPrompts = () => ({
  prompts: JOURNEY_PROMPTS.map(({ name, title, description, arguments: args }) => ({
    name,
    title,
    description,
    arguments: args.map((arg) => ({ ...arg })),
  })),
});

export const findPrompt = (name: string): JourneyPrompt => {
  const prompt = JOURNEY_PROMPTS.find((candidate) => candidate.name === name);
  if (!prompt) {
    throw new JsonRpcError(
      JSON_RPC.invalidParams,
      `Invalid params: name: unknown prompt ${name}; prompts/list names ${JOURNEY_PROMPTS.map((p) => p.name).join(', ')}`,
    );
  }
  return prompt;
};

/** `prompts/get`: -32602 naming the argument when a required one is missing or a vocabulary value is wrong. */
export const getPrompt = (name: string, args: Readonly<Record<string, string>> = {}): PromptMessages => {
  const prompt = findPrompt(name);
  const problems: string[] = [];
  for (const arg of prompt.arguments) {
    const value = args[arg.name];
    if (arg.required && (value === undefined || value.trim() === ''))
      problems.push(`arguments.${arg.name} is required`);
    if (value === undefined || value === '') continue;
    const allowed = VOCABULARY.get(arg.name);
    if (allowed && !allowed.includes(value))
      problems.push(`arguments.${arg.name} must be one of ${allowed.join(', ')}`);
    if (WHOLE_NUMBERS.has(arg.name) && !/^[1-9]\d{0,11}$/.test(value)) {
      problems.push(`arguments.${arg.name} must be a positive whole number`);
    }
  }
  const unknown = Object.keys(args).filter((key) => !prompt.arguments.some((arg) => arg.name === key));
  for (const key of unknown) problems.push(`arguments.${key} is not an argument of ${name}`);
  if (problems.length > 0)
    throw new JsonRpcError(JSON_RPC.invalidParams, `Invalid params: ${problems.join('; ')}`);
  return {
    description: prompt.description,
    messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }],
  };
};

/**
 * The closed vocabularies prompt arguments take; completion/complete offers the same lists. A Map, as the key
 * can be a client's word: `constructor` must find nothing.
 */
export const VOCABULARY: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['category', CATEGORIES],
  ['condition', CONDITIONS],
  ['status', QUOTE_STATUS_FILTERS],
]);

const WHOLE_NUMBERS = new Set(['quantity', 'max_unit_price', 'quote_request_id']);
