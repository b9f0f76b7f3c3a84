-- Custom migration: the database records every change to `jobs`, whoever makes it (the API or the
-- organisation's internal systems writing plain SQL). Each trigger marks the job's one row in
-- `job_changes` as changed (`seq` = NULL) inside the writer's own transaction; the feed's
-- sequencer numbers committed rows later, in commit order (docs/decisions.md, change feed).
-- Every UPDATE counts, even one that touches only internal columns: the triggers name no public
-- column, so a new public field can never be forgotten here; a partner at worst re-reads a job.
-- `ever_public` remembers that a job was once listable (not a draft, not deleted): only such a
-- job's removal is announced, so a draft's id never appears in the feed.
CREATE TRIGGER `jobs_change_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `ever_public`)
  VALUES (NEW.`id`, NULL, NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL,
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  INSERT INTO `job_changes` (`job_id`, `seq`, `ever_public`)
  VALUES (NEW.`id`, NULL, NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL,
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
  -- An id rewritten in place: the old id is gone for partners.
  IF OLD.`id` <> NEW.`id` THEN
    UPDATE `job_changes` SET `seq` = NULL WHERE `job_id` = OLD.`id`;
  END IF;
END;
--> statement-breakpoint
-- A hard DELETE keeps the row, so the removal reaches partners as a tombstone.
CREATE TRIGGER `jobs_change_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `ever_public`)
  VALUES (OLD.`id`, NULL, FALSE)
  ON DUPLICATE KEY UPDATE `seq` = NULL;
--> statement-breakpoint
-- Jobs that predate the feed, in listing order. Triggers exist already, so a write racing this
-- migration is recorded either way (IGNORE keeps the trigger's pending row). A non-draft that
-- is now soft-deleted was listable once: it gets a tombstone.
INSERT IGNORE INTO `job_changes` (`job_id`, `seq`, `ever_public`)
SELECT `id`, ROW_NUMBER() OVER (ORDER BY `created_at`, `id`), `status` <> 'draft' FROM `jobs`;
--> statement-breakpoint
INSERT INTO `job_change_sequence` (`id`, `last_seq`)
SELECT 1, COALESCE(MAX(`seq`), 0) FROM `job_changes`;
--> statement-breakpoint
INSERT INTO `service_secrets` (`name`, `secret`) VALUES ('token-signing', RANDOM_BYTES(32));
