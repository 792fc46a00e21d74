import type { Handler } from './types.js';
import { presentEvent, presentMarket, presentSeries, presentTag } from '../presenters/catalogue.js';

export const createAdminTag: Handler<'createAdminTag'> = async ({ body }, { services }) => ({
  status: 201,
  body: { tag: presentTag(await services.catalogueAdmin.createTag(body)) },
});

export const createAdminSeries: Handler<'createAdminSeries'> = async ({ body }, { services }) => ({
  status: 201,
  body: { series: presentSeries(await services.catalogueAdmin.createSeries(body)) },
});

export const createAdminEvent: Handler<'createAdminEvent'> = async ({ body, account }, { services }) => ({
  status: 201,
  body: { event: presentEvent(await services.catalogueAdmin.createEvent(body, account!.id)) },
});

export const createAdminMarket: Handler<'createAdminMarket'> = async ({ body }, { services }) => ({
  status: 201,
  body: { market: presentMarket(await services.catalogueAdmin.createMarket(body)) },
});

export const closeAdminMarket: Handler<'closeAdminMarket'> = async ({ params }, { services }) => ({
  status: 200,
  body: { market: presentMarket(await services.catalogueAdmin.closeMarket(params.ticker)) },
});

export const resolveAdminMarket: Handler<'resolveAdminMarket'> = async ({ params, body }, { services }) => ({
  status: 200,
  body: { market: presentMarket(await services.catalogueAdmin.resolveMarket(params.ticker, body.result)) },
});
