ALTER TABLE `job_change_histories` ADD `started_at` datetime(3) DEFAULT (utc_timestamp(3)) NOT NULL;--> statement-breakpoint
-- The ALTER recreated the table, as a restore does: its newest history takes the new creation time, so no history is minted for it.
UPDATE `job_change_histories` h JOIN (SELECT max(`id`) AS `id` FROM `job_change_histories`) newest ON h.`id` = newest.`id`
  SET h.`table_created` = (SELECT coalesce(cast(t.`CREATE_TIME` AS char), '') FROM information_schema.`TABLES` t
    WHERE t.`TABLE_SCHEMA` = database() AND t.`TABLE_NAME` = 'job_change_histories');--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `history` char(16);--> statement-breakpoint
-- The subscriptions there are now were made in the feed's newest history: no restore to tell them of.
UPDATE `webhook_subscriptions` SET `history` = (SELECT `history` FROM `job_change_histories` ORDER BY `id` DESC LIMIT 1);
