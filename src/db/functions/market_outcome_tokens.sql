-- A market's order-book identifiers, from its id (never reused) and ticker: the condition id is the SHA-256 of
-- 'dots-exchange/condition/<id>/<ticker>' (0x and 64 hex digits), each outcome token id the SHA-256 of the
-- condition's 32 bytes followed by 'YES' or 'NO', read as an unsigned big-endian integer (decimal uint256 text).
create or replace function market_outcome_tokens(id bigint, ticker text, out condition_id text, out yes_token_id text, out no_token_id text)
language plpgsql immutable strict as $$
declare
  condition bytea := sha256(convert_to('dots-exchange/condition/' || id || '/' || ticker, 'UTF8'));
  token bytea;
  n numeric;
begin
  condition_id := '0x' || encode(condition, 'hex');
  foreach token in array array[sha256(condition || convert_to('YES', 'UTF8')), sha256(condition || convert_to('NO', 'UTF8'))] loop
    n := 0;
    for i in 0 .. 31 loop
      n := n * 256 + get_byte(token, i);
    end loop;
    if yes_token_id is null then yes_token_id := n::text; else no_token_id := n::text; end if;
  end loop;
end
$$;
