CREATE TABLE `webhook_attempts` (
	`id` bigint unsigned AUTO_INCREMENT NOT NULL,
	`subscription_id` binary(16) NOT NULL,
	`event_id` varchar(64) NOT NULL,
	`position` bigint unsigned,
	`attempted_at` datetime(3) NOT NULL,
	`status` smallint unsigned,
	`error` varchar(40),
	`latency_ms` int unsigned NOT NULL,
	CONSTRAINT `webhook_attempts_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `event_types` varchar(200);--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `older_secret` varbinary(128);--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `older_secret_expires_at` datetime(3);--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `lease_generation` bigint unsigned DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `last_served_at` datetime(3);--> statement-breakpoint
CREATE INDEX `webhook_attempts_subscription_idx` ON `webhook_attempts` (`subscription_id`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_served_idx` ON `webhook_subscriptions` (`status`,`last_served_at`);