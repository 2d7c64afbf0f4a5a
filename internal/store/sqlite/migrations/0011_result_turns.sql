-- An agent loop's trajectory.
--
-- results.turns holds, for a result of an agent loop (spec agent:), every
-- model call in order as a JSON list of turns: {"text", "tool_calls",
-- "results" (each call's tool result: call_id, name, content, error,
-- latency_ms), "finish_reason", "input_tokens", "output_tokens", "cost_usd",
-- "latency_ms", "first_token_ms", "from_cache"}; NULL for a single call,
-- and for every result stored before this version.

ALTER TABLE results ADD COLUMN turns TEXT;
