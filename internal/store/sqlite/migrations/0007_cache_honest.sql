-- A reply served from the response cache is never billed again.
--
-- results.cost_usd and scores.judge_cost are what the call (the judge
-- calls) cost in the run that stored them: 0 for a reply served from the
-- cache. results.saved_usd and scores.judge_saved are what such replies
-- would have cost at the target's price: spend avoided, shown apart. A
-- reply's price is cost + saved.
--
-- Results stored before this version kept a cached reply's price in
-- cost_usd (from_cache said it was not paid); they are moved to saved_usd.
-- Judge costs stored before cannot be told apart and stay as they were.

ALTER TABLE results ADD COLUMN saved_usd   REAL NOT NULL DEFAULT 0;
ALTER TABLE scores  ADD COLUMN judge_saved REAL NOT NULL DEFAULT 0;

UPDATE results SET saved_usd = cost_usd, cost_usd = 0 WHERE from_cache = 1;
