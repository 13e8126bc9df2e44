"""The SQL pgio runs on the server: the session loop as a PL/pgSQL function, and the database counters read around a run.

Kept as text apart from the Python that drives it, so the loop of pgio.md §3.4 reads on its own.
"""

# The session loop of pgio.md §3.4, one slice long. Returns counts, each statement's time in µs,
# the blocks this call fetched and hit in the table and its index, and the rows its scans fetched
# from the table (pg_stat_all_tables.idx_tup_fetch's two parts: bitmap scans count on the table,
# plain index scans on the index). An older pgio-tui's function (without `tuples`) is dropped first,
# only then (CREATE OR REPLACE cannot change a function's result columns; a current one is replaced
# in place, so a pgio run beside this one never finds it missing).
DROP_OLD = r"""
DO $$
DECLARE
    f regprocedure := to_regprocedure('pgio_tui_slice(regclass, oid[], int, double precision, bigint, int, int)');
BEGIN
    IF f IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_proc WHERE oid = f AND 'tuples' = ANY(proargnames)) THEN
        EXECUTE 'DROP FUNCTION ' || f::text;
    END IF;
END
$$
"""
FUNCTION = r"""
CREATE OR REPLACE FUNCTION pgio_tui_slice(
    tab regclass, rels oid[], upd_pct int, secs double precision, scale bigint, wu int, uwu int,
    OUT selects int, OUT updates int, OUT select_us int[], OUT update_us int[],
    OUT blks_fetched bigint, OUT blks_hit bigint, OUT tuples bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
    stop_at timestamptz := clock_timestamp() + secs * interval '1 second';
    sel text := format('SELECT sum(scratch) FROM %s WHERE mykey BETWEEN $1 AND $2', tab);
    upd text := format('UPDATE %s SET scratch = scratch + 1 WHERE mykey BETWEEN $1 AND $2', tab);
    k bigint;
    t0 timestamptz;
    total bigint;
    is_update boolean;
    win_n int := 0;
    win_upd int := 0;
    win_sel int := 0;
    f0 bigint;
    h0 bigint;
    r0 bigint;
BEGIN
    selects := 0; updates := 0; select_us := '{}'; update_us := '{}';
    SELECT sum(pg_stat_get_xact_blocks_fetched(r)), sum(pg_stat_get_xact_blocks_hit(r)),
           sum(pg_stat_get_xact_tuples_fetched(r)) INTO f0, h0, r0
      FROM unnest(rels) AS r;
    WHILE clock_timestamp() < stop_at LOOP
        k := trunc(random() * (scale - wu - 1) + 1);  -- 1 .. scale - wu - 1, as pgio
        is_update := CASE upd_pct WHEN 0 THEN false WHEN 100 THEN true
                     ELSE (k % 2 = 0 AND win_upd < upd_pct) OR win_sel >= 100 - upd_pct END;
        t0 := clock_timestamp();
        IF is_update THEN
            EXECUTE upd USING k, k + uwu;
            update_us := update_us || (extract(epoch FROM clock_timestamp() - t0) * 1000000)::int;
            updates := updates + 1;
            win_upd := win_upd + 1;
        ELSE
            EXECUTE sel INTO total USING k, k + wu;
            select_us := select_us || (extract(epoch FROM clock_timestamp() - t0) * 1000000)::int;
            selects := selects + 1;
            win_sel := win_sel + 1;
        END IF;
        win_n := win_n + 1;
        IF win_n = 100 THEN  -- a window of 100 statements holds exactly upd_pct updates
            win_n := 0; win_upd := 0; win_sel := 0;
        END IF;
    END LOOP;
    SELECT sum(pg_stat_get_xact_blocks_fetched(r)) - f0, sum(pg_stat_get_xact_blocks_hit(r)) - h0,
           sum(pg_stat_get_xact_tuples_fetched(r)) - r0
      INTO blks_fetched, blks_hit, tuples FROM unnest(rels) AS r;
END
$fn$
"""

DB_STATS = ("blks_read", "blks_hit", "tup_returned", "tup_fetched", "tup_updated", "deadlocks", "blk_read_time")
