export { startOrderService, type OrderServiceOptions } from './order.service.js';
export { orderSettingsSchema, type OrderSettings } from './order.config.js';
