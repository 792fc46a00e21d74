-- The start of a batch of order placements, in one round trip (src/db/repositories/trading.ts beginPlacements).
--
-- 1. Locks the markets the batch names (by ticker, or by numeric id), in id order (FOR NO KEY UPDATE, as
--    lockMarket does; a numeric ref may lock one market more than needed, which only serialises a little more).
-- 2. Then, by statements of their own (each takes a new snapshot in a VOLATILE function under READ COMMITTED,
--    so they see everything committed before the locks were granted), returns one JSON object of lists of
--    named objects (empty lists, never null):
--    - markets: the locked markets {id, ticker, event_id, status};
--    - sequences: one order sequence number per item, increasing in item order;
--    - taken: the items' {account_id, client_order_id} already used by an order;
--    - positions: {account_id, market_id, side, shares, reserved} of the selling items;
--    - crossing: the live orders any item of an ACTIVE market could meet (per market and book side, from the
--      loosest limit among the items taking from that side), each {id, account_id, market_id, side, action,
--      price, remaining, expiration_ts, sequence};
--    - balances: {user_id, cash, reserved} of the placing accounts and of the crossing orders' accounts (a
--      superset of every account the batch can change), locked in account order.
-- Decimals and bigints are JSON strings, so that they reach the service exact.
--
-- p_items: a JSON array of {ref, account, client_order_id, side, sell, book_side, yes_limit}; book_side is the
-- side the item takes from, yes_limit its limit there in the YES frame.
create or replace function placements_begin(p_refs text[], p_numeric_ids bigint[], p_items json) returns json
language plpgsql as $$
declare
  v_ids bigint[];
  v_result json;
begin
  select array_agg(mk.id order by mk.id) into v_ids
    from markets mk
   where mk.ticker = any(p_refs) or mk.id = any(p_numeric_ids);
  perform 1 from markets mk where mk.id = any(v_ids) order by mk.id for no key update;

  with i as (
    select x.ref, x.account, x.client_order_id, x.side, x.sell, x.book_side, x.yes_limit,
           coalesce(
             (select mk.id from markets mk where mk.id = any(v_ids) and mk.ticker = x.ref),
             (select mk.id from markets mk where mk.id = any(v_ids)
                 and mk.id = case when x.ref ~ '^\d{1,18}$' then x.ref::bigint end)
           ) as market_id
      from json_to_recordset(p_items) as x(ref text, account uuid, client_order_id text, side text, sell boolean, book_side text, yes_limit numeric)
  ), a as (
    select i.* from i join markets mk on mk.id = i.market_id and mk.status = 'ACTIVE'
  ), lims as (
    select a.market_id, a.book_side, case when a.book_side = 'ask' then max(a.yes_limit) else min(a.yes_limit) end as lim
      from a group by a.market_id, a.book_side
  ), c as (
    select o.*
      from lims cross join lateral (
        select o.id, o.account_id, o.market_id, o.side, o.action, o.price, o.remaining, o.expiration_ts, o.sequence
          from orders o
         where lims.book_side = 'ask' and o.market_id = lims.market_id and o.book_side = 'ask'
           and o.status in ('OPEN', 'PARTIAL') and o.yes_price <= lims.lim
        union all
        select o.id, o.account_id, o.market_id, o.side, o.action, o.price, o.remaining, o.expiration_ts, o.sequence
          from orders o
         where lims.book_side = 'bid' and o.market_id = lims.market_id and o.book_side = 'bid'
           and o.status in ('OPEN', 'PARTIAL') and o.yes_price >= lims.lim
      ) o
  ), b as (
    select bl.user_id, bl.cash, bl.reserved
      from balances bl
     where bl.user_id = any(array(select c.account_id from c) || array(select i.account from i))
     order by bl.user_id
     for no key update
  )
  select json_build_object(
    'markets', coalesce((select json_agg(json_build_object('id', mk.id::text, 'ticker', mk.ticker, 'event_id', mk.event_id::text, 'status', mk.status))
                           from markets mk where mk.id = any(v_ids)), '[]'),
    'sequences', (select json_agg(s.v::text order by s.g)
                    from (select g, nextval('order_sequence') as v from generate_series(1, json_array_length(p_items)) g) s),
    'taken', coalesce((select json_agg(json_build_object('account_id', i.account, 'client_order_id', i.client_order_id)) from i
                        where i.client_order_id is not null
                          and exists (select 1 from orders o where o.account_id = i.account and o.client_order_id = i.client_order_id)), '[]'),
    'positions', coalesce((select json_agg(json_build_object('account_id', p.account_id, 'market_id', p.market_id::text, 'side', p.side,
                                                             'shares', p.shares::text, 'reserved', p.reserved::text))
                             from positions p
                             join (select distinct a.account, a.market_id, a.side from a where a.sell) k
                               on p.account_id = k.account and p.market_id = k.market_id and p.side = k.side), '[]'),
    'crossing', coalesce((select json_agg(json_build_object('id', c.id, 'account_id', c.account_id, 'market_id', c.market_id::text,
                                                            'side', c.side, 'action', c.action, 'price', c.price::text,
                                                            'remaining', c.remaining::text, 'expiration_ts', c.expiration_ts,
                                                            'sequence', c.sequence::text)) from c), '[]'),
    'balances', coalesce((select json_agg(json_build_object('user_id', b.user_id, 'cash', b.cash::text, 'reserved', b.reserved::text)
                                          order by b.user_id) from b), '[]')
  ) into v_result;
  return v_result;
end
$$;
