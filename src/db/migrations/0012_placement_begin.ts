import type { Knex } from 'knex';

/**
 * `placement_begin(...)`: the start of an order placement in one round trip. It locks the market (by
 * ticker, or else by numeric id; FOR NO KEY UPDATE, as lockMarket), and then, by a second statement (which,
 * in a VOLATILE function under READ COMMITTED, takes a new snapshot: it sees everything committed before
 * the lock was granted), reads what placement needs: the order's sequence number, whether its
 * client_order_id is taken, the position it would sell from, the live orders of the opposite book side it
 * would meet in price then time priority, and the balance rows of the placing account and of the crossing
 * orders' accounts, locked in account order (src/db/repositories/trading.ts placementBegin).
 * A market that is not ACTIVE: its row only. No market: no rows.
 */
const READS = (order: 'asc' | 'desc', compare: '<=' | '>=') => `
      return query
      with c as (
        select o.id, o.account_id, o.market_id, o.side, o.action, o.price, o.remaining, o.expiration_ts, o.sequence,
               row_number() over (order by o.yes_price ${order}, o.sequence) as ord
          from orders o
         where o.market_id = m.id and o.book_side = p_book_side and o.status in ('OPEN', 'PARTIAL')
           and o.yes_price ${compare} p_yes_limit
      ), b as (
        select bl.user_id, bl.cash::text as cash, bl.reserved::text as reserved
          from balances bl
         where bl.user_id = any(array(select c.account_id from c) || p_account)
         order by bl.user_id
         for no key update
      )
      select m.id, m.ticker, m.event_id, m.status,
             q.q_sequence, q.q_taken, q.q_shares, q.q_reserved, q.q_has_position, q.q_balances,
             c.id, c.account_id, c.market_id, c.side, c.action, c.price, c.remaining, c.expiration_ts, c.sequence
        from (
          select nextval('order_sequence') as q_sequence,
                 (p_client_order_id is not null and exists (select 1 from orders x where x.account_id = p_account and x.client_order_id = p_client_order_id)) as q_taken,
                 p.shares as q_shares, p.reserved as q_reserved, p.account_id is not null as q_has_position,
                 (select json_agg(json_build_array(b.user_id, b.cash, b.reserved) order by b.user_id) from b) as q_balances
            from (select 1) one
            left join positions p on p_sell and p.account_id = p_account and p.market_id = m.id and p.side = p_side
        ) q
        left join c on true
       order by c.ord;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function placement_begin(
      p_ref text, p_account uuid, p_client_order_id text, p_side text, p_sell boolean, p_book_side text, p_yes_limit numeric
    ) returns table (
      m_id bigint, m_ticker text, m_event_id bigint, m_status text,
      q_sequence bigint, q_taken boolean, q_shares numeric, q_reserved numeric, q_has_position boolean, q_balances json,
      id uuid, account_id uuid, market_id bigint, side text, action text, price numeric, remaining numeric, expiration_ts timestamptz, sequence bigint
    )
    language plpgsql volatile as $$
    #variable_conflict use_column
    declare
      m record;
    begin
      select mk.id, mk.ticker, mk.event_id, mk.status into m from markets mk where mk.ticker = p_ref for no key update;
      if not found and p_ref ~ '^\\d{1,18}$' then
        select mk.id, mk.ticker, mk.event_id, mk.status into m from markets mk where mk.id = p_ref::bigint for no key update;
      end if;
      if not found then
        return;
      end if;
      if m.status <> 'ACTIVE' then
        return query select m.id, m.ticker, m.event_id, m.status,
          null::bigint, null::boolean, null::numeric, null::numeric, null::boolean, null::json,
          null::uuid, null::uuid, null::bigint, null::text, null::text, null::numeric, null::numeric, null::timestamptz, null::bigint;
        return;
      end if;
      if p_book_side = 'ask' then
        ${READS('asc', '<=')}
      else
        ${READS('desc', '>=')}
      end if;
    end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function placement_begin(text, uuid, text, text, boolean, text, numeric)');
}
