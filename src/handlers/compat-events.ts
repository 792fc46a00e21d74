import type { Handler } from './types.js';
import { presentCompatTag } from '../presenters/compat-catalogue.js';
import {
  presentCompatEvent,
  presentCompatEventBySlug,
  presentCompatEventKeysetItem,
  presentCompatEventListItem,
  presentCompatEventPaginationItem,
  presentCompatEventResult,
  presentEventCreator,
} from '../presenters/compat-events.js';

/** Compatibility events and event creators (the public API they follow: docs/compatibility.md). */

export const listCompatEvents: Handler<'listCompatEvents'> = async ({ query }, { services }) => ({
  status: 200,
  body: (await services.compatEvents.list(query)).map(presentCompatEventListItem),
});

export const listCompatEventsKeyset: Handler<'listCompatEventsKeyset'> = async ({ query }, { services }) => {
  const page = await services.compatEvents.keyset(query);
  return { status: 200, body: { events: page.rows.map(presentCompatEventKeysetItem), next_cursor: page.nextCursor } };
};

export const listCompatEventsPaginated: Handler<'listCompatEventsPaginated'> = async ({ query }, { services }) => {
  const page = await services.compatEvents.paginated(query);
  return {
    status: 200,
    body: { data: page.rows.map(presentCompatEventPaginationItem), pagination: { hasMore: page.hasMore, totalResults: page.totalResults } },
  };
};

export const listCompatEventResults: Handler<'listCompatEventResults'> = async ({ query }, { services }) => ({
  status: 200,
  body: (await services.compatEvents.results(query)).map(presentCompatEventResult),
});

export const getCompatEvent: Handler<'getCompatEvent'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatEvent(await services.compatEvents.get(params.id)),
});

export const getCompatEventBySlug: Handler<'getCompatEventBySlug'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatEventBySlug(await services.compatEvents.getBySlug(params.slug)),
});

export const listCompatEventTags: Handler<'listCompatEventTags'> = async ({ params }, { services }) => ({
  status: 200,
  body: (await services.compatEvents.tags(params.id)).map(presentCompatTag),
});

export const getCompatEventTweetCount: Handler<'getCompatEventTweetCount'> = async ({ params }, { services }) => ({
  status: 200,
  body: { tweetCount: await services.compatEvents.tweetCount(params.id) },
});

export const countCompatEventComments: Handler<'countCompatEventComments'> = async ({ params }, { services }) => ({
  status: 200,
  body: { count: await services.compatEvents.commentCount(params.id) },
});

export const listEventCreators: Handler<'listEventCreators'> = async ({ query }, { services }) => ({
  status: 200,
  body: (await services.eventCreators.list(query)).map(presentEventCreator),
});

export const getEventCreator: Handler<'getEventCreator'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentEventCreator(await services.eventCreators.get(params.id)),
});
