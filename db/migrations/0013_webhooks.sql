CREATE TABLE `webhook_subscriptions` (
	`id` binary(16) NOT NULL,
	`consumer_id` varchar(64) NOT NULL,
	`consumer_name` varchar(200),
	`url` varchar(2048) NOT NULL,
	`description` varchar(500),
	`status` enum('active','disabled') NOT NULL DEFAULT 'active',
	`disabled_reason` varchar(200),
	`last_error` varchar(500),
	`secret` varbinary(128) NOT NULL,
	`previous_secret` varbinary(128),
	`previous_secret_expires_at` datetime(3),
	`position` bigint unsigned NOT NULL,
	`attempts` int unsigned NOT NULL DEFAULT 0,
	`failing_since` datetime(3),
	`next_attempt_at` datetime(3) NOT NULL,
	`last_delivered_at` datetime(3),
	`lease_owner` varchar(64),
	`lease_expires_at` datetime(3),
	`created_at` datetime(3) NOT NULL,
	CONSTRAINT `webhook_subscriptions_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_consumer_idx` ON `webhook_subscriptions` (`consumer_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_due_idx` ON `webhook_subscriptions` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_consumer_name_idx` ON `webhook_subscriptions` (`consumer_name`);