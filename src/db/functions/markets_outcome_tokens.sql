-- markets.condition_id, yes_token_id and no_token_id, set by a BEFORE INSERT trigger whatever inserts the row
-- (values sent are replaced): see market_outcome_tokens.
create or replace function markets_outcome_tokens() returns trigger
language plpgsql as $$
begin
  select t.condition_id, t.yes_token_id, t.no_token_id into new.condition_id, new.yes_token_id, new.no_token_id
    from market_outcome_tokens(new.id, new.ticker) t;
  return new;
end
$$;
