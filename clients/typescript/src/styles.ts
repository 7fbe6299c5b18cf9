// The contract's types in each key style of x-api-inflection (copied from generated/ by
// scripts/client-contract.ts), chosen by the client's `style`.
import type { paths as SnakePaths, webhooks as SnakeWebhooks, components as SnakeComponents } from './contract/snake.js';
import type { paths as CamelPaths, webhooks as CamelWebhooks, components as CamelComponents } from './contract/camel.js';
import type { paths as DashPaths, webhooks as DashWebhooks, components as DashComponents } from './contract/dash.js';
import type { paths as PascalPaths, webhooks as PascalWebhooks, components as PascalComponents } from './contract/pascal.js';

export interface Styles {
  snake: { paths: SnakePaths; webhooks: SnakeWebhooks; components: SnakeComponents };
  camel: { paths: CamelPaths; webhooks: CamelWebhooks; components: CamelComponents };
  dash: { paths: DashPaths; webhooks: DashWebhooks; components: DashComponents };
  pascal: { paths: PascalPaths; webhooks: PascalWebhooks; components: PascalComponents };
}

export type Style = keyof Styles;
export type Paths<S extends Style = 'camel'> = Styles[S]['paths'];
/** A schema of the contract in a key style: `Schema<'Task'>`, `Schema<'User', 'snake'>`. */
export type Schema<Name extends keyof Styles['snake']['components']['schemas'], S extends Style = 'camel'> = Styles[S]['components']['schemas'][Name];

type EventBody<W> = W extends { post: { requestBody: { content: { 'application/json': infer B } } } } ? B : never;
type TypeKey<S extends Style> = S extends 'pascal' ? 'Type' : 'type';
/** The event types the contract declares. */
export type EventType = keyof Styles['snake']['webhooks'];
/** One event type's payload, its `type` narrowed to that one: `EventOf<'task.created'>`. */
export type EventOf<T extends EventType, S extends Style = 'camel'> = Omit<EventBody<Styles[S]['webhooks'][T]>, TypeKey<S>> & Record<TypeKey<S>, T>;
/** Any event the contract's `webhooks` section declares: a union discriminated by `type` (`Type` in the pascal style). */
export type WebhookEvent<S extends Style = 'camel'> = { [T in EventType]: EventOf<T, S> }[EventType];
