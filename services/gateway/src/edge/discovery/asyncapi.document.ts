/** What scripts/generate-event-descriptors.mjs extracts from the event protos (buf's descriptor image). */
export interface EventDescriptors {
  readonly files: readonly string[];
  readonly messages: readonly MessageDescriptor[];
  readonly enums: readonly { readonly name: string; readonly values: readonly string[] }[];
}

export interface MessageDescriptor {
  /** Fully qualified, e.g. `marketplace.quote.v1.QuoteEvent`. */
  readonly name: string;
  readonly comment?: string;
  readonly oneofs: readonly string[];
  readonly fields: readonly FieldDescriptor[];
}

export interface FieldDescriptor {
  /** The proto3 JSON name (lowerCamelCase). */
  readonly name: string;
  /** `TYPE_STRING`, `TYPE_INT64`, `TYPE_MESSAGE`... (google.protobuf.FieldDescriptorProto.Type). */
  readonly type: string;
  readonly repeated: boolean;
  readonly typeName?: string;
  /** Index into the message's `oneofs` for a member of a real oneof. */
  readonly oneof?: number;
  /** A proto3 `optional` field: presence is tracked. */
  readonly optional?: boolean;
  readonly comment?: string;
}

/** One topic of the event stream (docs/specification.md, "Event stream") and the protobuf message of its values. */
export interface TopicDoc {
  readonly channel: string;
  readonly address: string;
  readonly message: string;
  readonly description: string;
}

type JsonObject = Record<string, unknown>;

const SCALARS: Record<string, JsonObject> = {
  TYPE_STRING: { type: 'string' },
  TYPE_BOOL: { type: 'boolean' },
  TYPE_BYTES: { type: 'string', contentEncoding: 'base64' },
  TYPE_DOUBLE: { type: 'number' },
  TYPE_FLOAT: { type: 'number' },
  TYPE_INT32: { type: 'integer', format: 'int32' },
  TYPE_SINT32: { type: 'integer', format: 'int32' },
  TYPE_SFIXED32: { type: 'integer', format: 'int32' },
  TYPE_UINT32: { type: 'integer', format: 'int32', minimum: 0 },
  TYPE_FIXED32: { type: 'integer', format: 'int32', minimum: 0 },
  TYPE_INT64: { type: 'integer', format: 'int64' },
  TYPE_SINT64: { type: 'integer', format: 'int64' },
  TYPE_SFIXED64: { type: 'integer', format: 'int64' },
  TYPE_UINT64: { type: 'integer', format: 'int64', minimum: 0 },
  TYPE_FIXED64: { type: 'integer', format: 'int64', minimum: 0 },
};

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The JSON Schema of each message, in its proto3 JSON form (lowerCamelCase names; at most one member of a
 * oneof is set), keyed by the fully qualified message name; message fields refer to each other by $ref.
 */
export const messageSchemas = (descriptors: EventDescriptors): Record<string, JsonObject> => {
  const messages = new Set(descriptors.messages.map((message) => message.name));
  const enums = new Map(descriptors.enums.map((enumType) => [enumType.name, enumType.values]));
  const fieldSchema = (owner: string, field: FieldDescriptor): JsonObject => {
    let schema: JsonObject | undefined = SCALARS[field.type];
    if (field.type === 'TYPE_MESSAGE' && field.typeName !== undefined && messages.has(field.typeName)) {
      schema = schemaRef(field.typeName);
    } else if (field.type === 'TYPE_ENUM' && field.typeName !== undefined && enums.has(field.typeName)) {
      schema = { type: 'string', enum: enums.get(field.typeName) };
    }
    if (!schema)
      throw new Error(`${owner}.${field.name}: unsupported field type ${field.type} ${field.typeName ?? ''}`);
    const described = field.comment ? { ...schema, description: field.comment } : schema;
    return field.repeated
      ? { type: 'array', items: schema, ...(field.comment ? { description: field.comment } : {}) }
      : described;
  };
  return Object.fromEntries(
    descriptors.messages.map((message) => {
      const oneofNotes = message.oneofs.map((oneof, index) => {
        const members = message.fields.filter((field) => field.oneof === index).map((field) => field.name);
        return `At most one of ${members.join(', ')} is set (oneof ${oneof}).`;
      });
      const description = [message.comment, ...oneofNotes].filter(Boolean).join(' ');
      return [
        message.name,
        {
          type: 'object',
          ...(description ? { description } : {}),
          properties: Object.fromEntries(
            message.fields.map((field) => [field.name, fieldSchema(message.name, field)]),
          ),
          additionalProperties: false,
        },
      ];
    }),
  );
};

/** The CloudEvents binary-mode headers every event carries (see @marketplace/eventsourcing). */
const EVENT_HEADERS: JsonObject = {
  type: 'object',
  required: ['ce_specversion', 'ce_id', 'ce_type', 'ce_source', 'ce_subject', 'ce_time', 'content-type'],
  properties: {
    ce_specversion: { type: 'string', const: '1.0' },
    ce_id: { type: 'string', description: 'UUIDv7 of the event; also event_id in the payload' },
    ce_type: {
      type: 'string',
      description: '<topic>.<EventType>, e.g. marketplace.listing.v1.ListingCreated',
    },
    ce_source: { type: 'string', description: 'The service that recorded the event' },
    ce_subject: { type: 'string', description: 'The aggregate id, also the message key' },
    ce_time: { type: 'string', format: 'date-time' },
    'content-type': { type: 'string', const: 'application/protobuf' },
    traceparent: { type: 'string', description: 'W3C trace context of the command that produced the event' },
  },
};

/**
 * /asyncapi.json (AsyncAPI 3.0.0): one channel per topic, the marketplace sending on each; message values are
 * protobuf (application/protobuf) whose structure the payload schemas give in proto3 JSON form, keyed by
 * aggregate id, with CloudEvents headers.
 */
export const asyncApiDocument = (
  topics: readonly TopicDoc[],
  descriptors: EventDescriptors,
  publicBaseUrl: string,
): JsonObject => {
  const schemas = messageSchemas(descriptors);
  for (const topic of topics) {
    if (!schemas[topic.message]) throw new Error(`topic ${topic.address}: no message ${topic.message}`);
  }
  const messageName = (topic: TopicDoc) => topic.message.split('.').pop() ?? topic.message;
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Liquidation Marketplace event stream',
      version: '1.0.0',
      description:
        'Every state change of the marketplace, one topic per aggregate type, for analytics consumers. Message ' +
        'keys are aggregate ids (events of one aggregate stay in order); values are protobuf messages from the ' +
        `marketplace's proto/ files (${descriptors.files.join(', ')}); headers are CloudEvents 1.0 in binary ` +
        'mode plus W3C traceparent. Delivery is at least once: deduplicate on ce_id.',
      externalDocs: { url: `${publicBaseUrl}/llms.txt` },
    },
    defaultContentType: 'application/protobuf',
    channels: Object.fromEntries(
      topics.map((topic) => [
        topic.channel,
        {
          address: topic.address,
          description: topic.description,
          messages: { [messageName(topic)]: { $ref: `#/components/messages/${messageName(topic)}` } },
        },
      ]),
    ),
    operations: Object.fromEntries(
      topics.map((topic) => [
        `publish${messageName(topic)}`,
        {
          action: 'send',
          channel: { $ref: `#/channels/${topic.channel}` },
          summary: `The marketplace publishes every ${topic.channel} event on ${topic.address}.`,
          messages: [{ $ref: `#/channels/${topic.channel}/messages/${messageName(topic)}` }],
        },
      ]),
    ),
    components: {
      messages: Object.fromEntries(
        topics.map((topic) => [
          messageName(topic),
          {
            name: messageName(topic),
            title: topic.message,
            contentType: 'application/protobuf',
            headers: { $ref: '#/components/schemas/CloudEventHeaders' },
            payload: schemaRef(topic.message),
            correlationId: { location: '$message.header#/ce_subject' },
          },
        ]),
      ),
      schemas: { CloudEventHeaders: EVENT_HEADERS, ...schemas },
    },
  };
};
