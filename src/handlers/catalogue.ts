import type { Handler } from './types.js';
import {
  presentEventDetail,
  presentEventListItem,
  presentMarket,
  presentRelatedTag,
  presentSearchItem,
  presentSeries,
  presentTag,
} from '../presenters/catalogue.js';

/** The native catalogue. */

export const listEvents: Handler<'listEvents'> = async ({ query }, { services }) => {
  const page = await services.catalogueEvents.list(query);
  return { status: 200, body: { cursor: page.cursor, events: page.events.map(presentEventListItem) } };
};

export const getEvent: Handler<'getEvent'> = async ({ params, query }, { services }) => ({
  status: 200,
  body: presentEventDetail(await services.catalogueEvents.get(params.event_ticker, query)),
});

export const listSeries: Handler<'listSeries'> = async ({ query }, { services }) => {
  const page = await services.catalogueSeries.list(query);
  return { status: 200, body: { cursor: page.cursor, series: page.series.map(presentSeries) } };
};

export const getSeries: Handler<'getSeries'> = async ({ params }, { services }) => ({
  status: 200,
  body: { series: presentSeries(await services.catalogueSeries.get(params.series_ticker)) },
});

export const getTag: Handler<'getTag'> = async ({ params }, { services }) => {
  const { tag, related } = await services.catalogueTags.get(params.slug);
  return { status: 200, body: { tag: presentTag(tag), related: related.map(presentRelatedTag) } };
};

export const listMarkets: Handler<'listMarkets'> = async ({ query }, { services }) => {
  const list = await services.catalogueMarkets.list(query);
  const markets = list.markets.map(presentMarket);
  return list.mode === 'page'
    ? { status: 200, body: { markets, total: list.total, page: list.page, totalPages: list.totalPages } }
    : { status: 200, body: { cursor: list.cursor, markets } };
};

export const getMarket: Handler<'getMarket'> = async ({ params }, { services }) => ({
  status: 200,
  body: { market: presentMarket(await services.catalogueMarkets.get(params.ticker)) },
});

export const searchCatalogue: Handler<'searchCatalogue'> = async ({ query }, { services }) => {
  const { query: text, results } = await services.catalogueSearch.search(query);
  return { status: 200, body: { query: text, results: results.map(presentSearchItem) } };
};
