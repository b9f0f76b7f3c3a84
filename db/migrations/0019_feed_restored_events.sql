CREATE TABLE `webhook_restores` (
	`history` char(16) NOT NULL,
	`told_at` datetime(3) NOT NULL,
	CONSTRAINT `webhook_restores_history` PRIMARY KEY(`history`)
);
--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `history` char(16);--> statement-breakpoint
-- The subscriptions there are now were made in the feed's newest history: no restore to tell them of.
UPDATE `webhook_subscriptions` SET `history` = (SELECT `history` FROM `job_change_histories` ORDER BY `id` DESC LIMIT 1);
