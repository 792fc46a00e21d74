import type { Handler } from './types.js';
import {
  presentCompatSeries,
  presentCompatSeriesDetail,
  presentCompatSeriesSummary,
  presentCompatTag,
  presentPublicSearch,
} from '../presenters/compat-catalogue.js';

/** Compatibility series, tags and public search (the public API they follow: docs/compatibility.md). */

export const listCompatSeries: Handler<'listCompatSeries'> = async ({ query }, { services }) => ({
  status: 200,
  body: (await services.compatSeries.list(query)).map(presentCompatSeries),
});

export const getCompatSeries: Handler<'getCompatSeries'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatSeriesDetail(await services.compatSeries.get(params.id)),
});

export const countCompatSeriesComments: Handler<'countCompatSeriesComments'> = async ({ params }, { services }) => ({
  status: 200,
  body: { count: await services.compatSeries.countComments(params.id) },
});

export const getCompatSeriesSummary: Handler<'getCompatSeriesSummary'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatSeriesSummary(await services.compatSeries.summaryById(params.id)),
});

export const getCompatSeriesSummaryBySlug: Handler<'getCompatSeriesSummaryBySlug'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatSeriesSummary(await services.compatSeries.summaryBySlug(params.slug)),
});

export const getCompatTag: Handler<'getCompatTag'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatTag(await services.compatTags.get(params.id)),
});

export const getCompatTagBySlug: Handler<'getCompatTagBySlug'> = async ({ params }, { services }) => ({
  status: 200,
  body: presentCompatTag(await services.compatTags.getBySlug(params.slug)),
});

export const searchPublic: Handler<'searchPublic'> = async ({ query }, { services }) => ({
  status: 200,
  body: presentPublicSearch(await services.publicSearch.search(query)),
});
