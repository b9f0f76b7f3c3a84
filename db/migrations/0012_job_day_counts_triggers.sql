-- Custom migration: job_day_counts (0011) kept by the database, as job_counts is (0008, 0010): a
-- listable job (visible_status one of the four listed statuses) adds 1 to its (day of
-- created_at, status) in the writing connection's own row, so writers never wait for each other;
-- the service folds committed rows into slot 0. Triggers of their own, beside the others.
CREATE TRIGGER `jobs_day_counts_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
BEGIN
  IF NEW.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    INSERT INTO `job_day_counts` (`day`, `status`, `slot`, `n`)
    VALUES (DATE(NEW.`created_at`), NEW.`visible_status`, CONNECTION_ID(), 1)
    ON DUPLICATE KEY UPDATE `n` = `n` + 1;
  END IF;
END;
--> statement-breakpoint
-- Only a change of day or status moves a count.
CREATE TRIGGER `jobs_day_counts_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  DECLARE was_counted BOOLEAN DEFAULT COALESCE(OLD.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  DECLARE is_counted BOOLEAN DEFAULT COALESCE(NEW.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  IF NOT (was_counted AND is_counted AND OLD.`visible_status` = NEW.`visible_status`
      AND DATE(OLD.`created_at`) = DATE(NEW.`created_at`)) THEN
    IF was_counted THEN
      INSERT INTO `job_day_counts` (`day`, `status`, `slot`, `n`)
      VALUES (DATE(OLD.`created_at`), OLD.`visible_status`, CONNECTION_ID(), -1)
      ON DUPLICATE KEY UPDATE `n` = `n` - 1;
    END IF;
    IF is_counted THEN
      INSERT INTO `job_day_counts` (`day`, `status`, `slot`, `n`)
      VALUES (DATE(NEW.`created_at`), NEW.`visible_status`, CONNECTION_ID(), 1)
      ON DUPLICATE KEY UPDATE `n` = `n` + 1;
    END IF;
  END IF;
END;
--> statement-breakpoint
CREATE TRIGGER `jobs_day_counts_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
BEGIN
  IF OLD.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    INSERT INTO `job_day_counts` (`day`, `status`, `slot`, `n`)
    VALUES (DATE(OLD.`created_at`), OLD.`visible_status`, CONNECTION_ID(), -1)
    ON DUPLICATE KEY UPDATE `n` = `n` - 1;
  END IF;
END;
--> statement-breakpoint
-- The jobs already there, counted with writers held off; what the triggers counted since they
-- were created is replaced (see 0008).
LOCK TABLES `jobs` READ, `job_day_counts` WRITE;
--> statement-breakpoint
DELETE FROM `job_day_counts`;
--> statement-breakpoint
INSERT INTO `job_day_counts` (`day`, `status`, `slot`, `n`)
SELECT DATE(`created_at`), `visible_status`, 0, COUNT(*) FROM `jobs`
WHERE `visible_status` IN ('active', 'open', 'paused', 'closed')
GROUP BY DATE(`created_at`), `visible_status`;
--> statement-breakpoint
UNLOCK TABLES;
