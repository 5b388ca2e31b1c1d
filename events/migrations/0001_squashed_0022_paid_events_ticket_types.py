"""The events app's schema in one step, for a database that has none of its migrations yet.

It replaces 0001 to 0022: a new database (a test database, `make run` on a fresh machine, the eval
runner's and the bench's throw-away sites) is made by creating each table as the models now are,
instead of replaying twenty-two migrations' changes one by one (about 2.6 s of one core on SQLite,
most of it Django rebuilding its model state after each change). A database that has applied some of
0001 to 0022 goes on through them, as before; Django then counts this one as applied.

Besides the tables, it does what those migrations did outside the models: PostgreSQL's pg_trgm
extension, the trigram indexes of 0006 and the two-character keyword column, functions and index of
0012, by their own functions (the SQL stays in one place). Their data steps (counting Activity rows and
seats taken, issuing tickets, a ticket type for each paid event) have nothing to do on an empty
database and are left out.
"""

import importlib

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models

trigram_indexes = importlib.import_module("events.migrations.0006_keyword_trigram_indexes")
keyword_pairs = importlib.import_module("events.migrations.0012_keyword_gram_indexes")


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('events', '0001_initial'),
        ('events', '0002_activity_mode_admin'),
        ('events', '0003_waitlist_outbox'),
        ('events', '0004_activity_mode_mcp'),
        ('events', '0005_activity_dashboard_indexes'),
        ('events', '0006_keyword_trigram_indexes'),
        ('events', '0007_activity_counts'),
        ('events', '0008_activity_client'),
        ('events', '0009_the_door'),
        ('events', '0010_calendar_feeds'),
        ('events', '0010_reminders'),
        ('events', '0011_merge_reminders_calendar_feeds'),
        ('events', '0012_keyword_gram_indexes'),
        ('events', '0013_activity_counted'),
        ('events', '0014_event_seats_taken'),
        ('events', '0015_field_names'),
        ('events', '0016_model_names'),
        ('events', '0017_event_updated'),
        ('events', '0018_activity_claimed_mode'),
        ('events', '0019_registration_questions'),
        ('events', '0020_system_channel'),
        ('events', '0021_paid_registrations'),
        ('events', '0022_paid_events_ticket_types'),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='RetiredEventId',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('public_id', models.CharField(max_length=80, unique=True)),
                ('retired_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'verbose_name': 'retired event id',
                'verbose_name_plural': 'retired event ids',
            },
        ),
        migrations.CreateModel(
            name='VisitorState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('visitor_key', models.CharField(max_length=60, unique=True)),
                ('version', models.PositiveIntegerField(default=0)),
            ],
            options={
                'verbose_name': 'visitor state',
                'verbose_name_plural': 'visitor states',
            },
        ),
        migrations.CreateModel(
            name='ActivityCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField()),
                ('action', models.CharField(max_length=40)),
                ('mode', models.CharField(choices=[('ui', 'Person on a page'), ('agent', 'Agent tool'), ('api', 'API client'), ('admin', 'Organiser in the admin'), ('mcp', 'Agent over MCP'), ('system', 'The site itself')], max_length=10)),
                ('outcome', models.CharField(max_length=40)),
                ('client', models.CharField(blank=True, default='', max_length=100, verbose_name='client')),
                ('calls', models.PositiveBigIntegerField()),
            ],
            options={
                'verbose_name': 'activity count',
                'verbose_name_plural': 'activity counts',
                'constraints': [models.UniqueConstraint(fields=('day', 'mode', 'action', 'outcome', 'client'), name='activity_count_key'), models.CheckConstraint(condition=models.Q(('mode__in', ['ui', 'agent', 'api', 'admin', 'mcp', 'system'])), name='activity_count_mode_valid')],
            },
        ),
        migrations.CreateModel(
            name='CalendarFeed',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(editable=False, max_length=64, unique=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='created')),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='calendar_feed', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'calendar feed',
                'verbose_name_plural': 'calendar feeds',
            },
        ),
        migrations.CreateModel(
            name='Event',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('public_id', models.CharField(help_text='Opaque id used in URLs and tools, e.g. evt-webmcp-intro. Never reused.', max_length=80, unique=True, validators=[django.core.validators.RegexValidator('^evt-[a-z0-9]+(?:-[a-z0-9]+)*$', "An event id is 'evt-' followed by lowercase letters, digits and hyphens.")], verbose_name='public id')),
                ('title', models.CharField(max_length=200, verbose_name='title')),
                ('summary', models.CharField(max_length=300, verbose_name='summary')),
                ('description', models.TextField(blank=True, verbose_name='description')),
                ('starts_at', models.DateTimeField(db_index=True, verbose_name='starts at')),
                ('ends_at', models.DateTimeField(verbose_name='ends at')),
                ('location', models.CharField(choices=[('taipei', 'Taipei'), ('kaohsiung', 'Kaohsiung'), ('online', 'Online')], max_length=20, verbose_name='location')),
                ('venue', models.CharField(blank=True, max_length=200, verbose_name='venue')),
                ('price', models.CharField(choices=[('free', 'Free'), ('paid', 'Paid')], default='free', max_length=10, verbose_name='price')),
                ('price_amount', models.DecimalField(blank=True, decimal_places=0, max_digits=10, null=True, verbose_name='amount')),
                ('currency', models.CharField(blank=True, max_length=3, verbose_name='currency')),
                ('level', models.CharField(choices=[('beginner', 'Beginner'), ('intermediate', 'Intermediate'), ('advanced', 'Advanced')], max_length=20, verbose_name='level')),
                ('capacity', models.PositiveIntegerField(blank=True, help_text='Empty means unlimited.', null=True, verbose_name='capacity')),
                ('status', models.CharField(choices=[('draft', 'Draft'), ('published', 'Published'), ('cancelled', 'Cancelled')], default='draft', max_length=20, verbose_name='status')),
                ('offer_hours', models.PositiveSmallIntegerField(default=24, help_text='How long a seat offered from the waiting list is held (1 hour to 7 days, never past the start).', validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(168)], verbose_name='offer held for (hours)')),
                ('seats_taken', models.PositiveIntegerField(default=0, editable=False, verbose_name='seats taken')),
                ('requires_approval', models.BooleanField(default=False, help_text='Each registration waits (holding its seat) until a manager approves or declines it.', verbose_name='requires approval')),
                ('answers_close_at', models.DateTimeField(blank=True, help_text='Empty: until the event starts. Set it to close changes to the answers earlier.', null=True, verbose_name='answers can be changed until')),
                ('question_form', models.JSONField(blank=True, default=list, editable=False, verbose_name='questions as published')),
                ('ticket_form', models.JSONField(blank=True, default=list, editable=False, verbose_name='ticket types as published')),
                ('payment_code', models.CharField(blank=True, help_text="Printed before each payment reference, e.g. WEBMCP. Empty: taken from the event's id.", max_length=8, validators=[django.core.validators.RegexValidator('^[A-Z][A-Z0-9]{1,7}$', '2 to 8 capital letters or digits, starting with a letter.')], verbose_name='payment code')),
                ('payment_closes_at', models.DateTimeField(blank=True, help_text='Transfers are due by then at the latest. Empty: one day before the start.', null=True, verbose_name='last payment time')),
                ('at_door', models.BooleanField(default=False, help_text='A person may register now and pay at the door; the check-in records the payment.', verbose_name='offers paying at the door')),
                ('pending_may_pay_at_door', models.BooleanField(default=False, help_text='People still waiting for their transfer to be confirmed may pay at the door instead.', verbose_name='unpaid transfers may pay at the door')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated')),
            ],
            options={
                'verbose_name': 'event',
                'verbose_name_plural': 'events',
                'ordering': ['starts_at', 'id'],
                'indexes': [models.Index(fields=['status', 'starts_at'], name='event_status_start'), models.Index(fields=['status', 'location', 'price', 'level', 'starts_at'], name='event_filters'), models.Index(fields=['updated_at'], name='event_updated')],
                'constraints': [models.CheckConstraint(condition=models.Q(('public_id__startswith', 'evt-')), name='event_public_id_prefix'), models.CheckConstraint(condition=models.Q(('ends_at__gt', models.F('starts_at'))), name='event_ends_after_start', violation_error_message='The event must end after it starts.'), models.CheckConstraint(condition=models.Q(models.Q(('currency', ''), ('price', 'free'), ('price_amount__isnull', True)), models.Q(('price', 'paid'), ('price_amount__gt', 0), ('price_amount__isnull', False), models.Q(('currency', ''), _negated=True)), _connector='OR'), name='event_price_amount_matches_kind', violation_error_message='A paid event needs a positive amount and a currency; a free one has none.'), models.CheckConstraint(condition=models.Q(('capacity__isnull', True), ('capacity__gte', 1), _connector='OR'), name='event_capacity_positive', violation_error_message='Capacity is at least 1; leave it empty for unlimited.'), models.CheckConstraint(condition=models.Q(('location__in', ['taipei', 'kaohsiung', 'online'])), name='event_location_valid'), models.CheckConstraint(condition=models.Q(('level__in', ['beginner', 'intermediate', 'advanced'])), name='event_level_valid'), models.CheckConstraint(condition=models.Q(('price__in', ['free', 'paid'])), name='event_price_valid'), models.CheckConstraint(condition=models.Q(('status__in', ['draft', 'published', 'cancelled'])), name='event_status_valid'), models.CheckConstraint(condition=models.Q(('offer_hours__gte', 1), ('offer_hours__lte', 168)), name='event_offer_hours_range', violation_error_message='An offer is held between 1 hour and 7 days.')],
            },
        ),
        migrations.CreateModel(
            name='Question',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, verbose_name='position')),
                ('identifier', models.CharField(help_text='What programs and agents use for this question, e.g. dietary_need. Never shown.', max_length=40, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9_]{0,39}$', 'An identifier is a lowercase letter, then up to 39 lowercase letters, digits or underscores.')], verbose_name='identifier')),
                ('label_en', models.CharField(max_length=200, verbose_name='label (English)')),
                ('label_zh_hant', models.CharField(max_length=200, verbose_name='label (Traditional Chinese)')),
                ('help_en', models.CharField(blank=True, max_length=200, verbose_name='help (English)')),
                ('help_zh_hant', models.CharField(blank=True, max_length=200, verbose_name='help (Traditional Chinese)')),
                ('kind', models.CharField(choices=[('text', 'Short text'), ('long_text', 'Long text'), ('number', 'Number'), ('boolean', 'Yes or no'), ('consent', 'Consent (must be accepted)'), ('single_choice', 'One choice'), ('multi_choice', 'Several choices'), ('date', 'Date'), ('email', 'E-mail address'), ('url', 'Web address'), ('phone', 'Phone number')], max_length=20, verbose_name='kind')),
                ('required', models.BooleanField(default=False, verbose_name='required')),
                ('min_length', models.PositiveSmallIntegerField(blank=True, null=True, validators=[django.core.validators.MaxValueValidator(1000)], verbose_name='shortest answer')),
                ('max_length', models.PositiveSmallIntegerField(blank=True, help_text='Characters, for text answers; at most 1,000.', null=True, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(1000)], verbose_name='longest answer')),
                ('min_value', models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True, verbose_name='smallest number')),
                ('max_value', models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True, verbose_name='largest number')),
                ('min_date', models.DateField(blank=True, null=True, verbose_name='earliest date')),
                ('max_date', models.DateField(blank=True, null=True, verbose_name='latest date')),
                ('show_if_values', models.JSONField(blank=True, default=list, help_text='Option identifiers, or true / false for a yes-or-no question, e.g. ["yes", "maybe"].', verbose_name='…is one of')),
                ('staff_only', models.BooleanField(default=False, help_text='Filled in and seen by the organisers only.', verbose_name='organisers only')),
                ('show_at_door', models.BooleanField(default=False, verbose_name='show at the door')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='questions', to='events.event', verbose_name='event')),
                ('show_if', models.ForeignKey(blank=True, help_text="Ask this question only when that question's answer is one of the values below.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='dependants', to='events.question', verbose_name='show only when')),
            ],
            options={
                'verbose_name': 'registration question',
                'verbose_name_plural': 'registration questions',
                'ordering': ['event', 'position', 'id'],
            },
        ),
        migrations.CreateModel(
            name='QuestionOption',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, verbose_name='position')),
                ('identifier', models.CharField(max_length=40, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9_]{0,39}$', 'An identifier is a lowercase letter, then up to 39 lowercase letters, digits or underscores.')], verbose_name='identifier')),
                ('label_en', models.CharField(max_length=200, verbose_name='label (English)')),
                ('label_zh_hant', models.CharField(max_length=200, verbose_name='label (Traditional Chinese)')),
                ('hidden', models.BooleanField(default=False, help_text='No longer offered.', verbose_name='hidden')),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='options', to='events.question', verbose_name='question')),
            ],
            options={
                'verbose_name': 'option',
                'verbose_name_plural': 'options',
                'ordering': ['question', 'position', 'id'],
            },
        ),
        migrations.CreateModel(
            name='Registration',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('confirmed', 'Confirmed'), ('pending_approval', 'Waiting for approval'), ('pending_payment', 'Waiting for payment'), ('cancelled', 'Cancelled'), ('declined', 'Declined'), ('expired', 'Not paid in time')], default='confirmed', max_length=20, verbose_name='status')),
                ('ticket_code', models.CharField(editable=False, max_length=40, null=True, unique=True)),
                ('ticket_issued_at', models.DateTimeField(blank=True, null=True, verbose_name='ticket issued')),
                ('answers', models.JSONField(blank=True, default=dict, verbose_name='answers')),
                ('ticket_type', models.CharField(blank=True, default='', max_length=40, verbose_name='ticket type')),
                ('amount', models.PositiveIntegerField(default=0, verbose_name='amount due (TWD)')),
                ('payment_method', models.CharField(blank=True, choices=[('bank_transfer', 'Bank transfer'), ('at_door', 'Pay at the door'), ('dummy', 'Test payment')], default='', max_length=20, verbose_name='payment method')),
                ('payment_status', models.CharField(choices=[('none', 'Nothing to pay'), ('awaiting', 'Awaiting payment'), ('checking', 'Being checked'), ('at_door', 'Due at the door'), ('paid', 'Paid'), ('unpaid', 'Not paid'), ('refunded', 'Refunded')], default='none', max_length=20, verbose_name='payment')),
                ('payment_reference', models.CharField(blank=True, editable=False, max_length=12, null=True, unique=True, verbose_name='payment reference')),
                ('payment_due_at', models.DateTimeField(blank=True, null=True, verbose_name='pay by')),
                ('reported_last5', models.CharField(blank=True, default='', max_length=5, verbose_name='reported account digits')),
                ('reported_paid_on', models.DateField(blank=True, null=True, verbose_name='reported transfer date')),
                ('reported_at', models.DateTimeField(blank=True, null=True, verbose_name='reported')),
                ('paid_amount', models.PositiveIntegerField(default=0, verbose_name='paid (TWD)')),
                ('paid_at', models.DateTimeField(blank=True, null=True, verbose_name='paid')),
                ('paid_via', models.CharField(blank=True, choices=[('organiser', 'An organiser'), ('bank_statement', 'The bank statement'), ('door', 'At the door'), ('processor', 'The payment processor')], default='', max_length=20, verbose_name='paid via')),
                ('refunded_amount', models.PositiveIntegerField(default=0, verbose_name='refunded (TWD)')),
                ('refunded_at', models.DateTimeField(blank=True, null=True, verbose_name='refunded')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='registrations', to='events.event', verbose_name='event')),
                ('refunded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='refunded by')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='registrations', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'registration',
                'verbose_name_plural': 'registrations',
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='CheckIn',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scan_id', models.UUIDField(blank=True, null=True, unique=True, verbose_name='scan id')),
                ('scanned_at', models.DateTimeField(blank=True, null=True, verbose_name='scanned (device)')),
                ('checked_in_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='checked in')),
                ('scan_time_in_future', models.BooleanField(default=False, verbose_name='device clock ahead')),
                ('undone_at', models.DateTimeField(blank=True, null=True, verbose_name='undone')),
                ('staff', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='check_ins_done', to=settings.AUTH_USER_MODEL, verbose_name='checked in by')),
                ('undone_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='undone by')),
                ('registration', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='check_ins', to='events.registration', verbose_name='registration')),
            ],
            options={
                'verbose_name': 'check-in',
                'verbose_name_plural': 'check-ins',
                'ordering': ['-checked_in_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='BankStatementRow',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('checksum', models.CharField(max_length=64, unique=True, verbose_name='checksum')),
                ('source', models.CharField(blank=True, max_length=200, verbose_name='file')),
                ('line', models.PositiveIntegerField(default=0, verbose_name='line')),
                ('booked_on', models.DateField(blank=True, null=True, verbose_name='date')),
                ('amount', models.IntegerField(blank=True, null=True, verbose_name='amount (TWD)')),
                ('reference', models.CharField(blank=True, max_length=200, verbose_name='reference')),
                ('payer', models.CharField(blank=True, max_length=200, verbose_name='payer')),
                ('account_last5', models.CharField(blank=True, max_length=5, verbose_name='account digits')),
                ('state', models.CharField(choices=[('matched', 'Matched: payment confirmed'), ('late_confirmed', 'Late, a seat was free: confirmed again'), ('already_paid', 'Already paid'), ('no_match', 'No match'), ('invalid', 'Invalid row'), ('late', 'Late, no seat free: refund it'), ('partial', 'Less than due: not confirmed'), ('overpaid', 'More than due: not confirmed'), ('cancelled', 'For a cancelled registration: refund it')], max_length=20, verbose_name='state')),
                ('problem', models.CharField(blank=True, max_length=200, verbose_name='problem')),
                ('imported_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='imported')),
                ('imported_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='imported by')),
                ('event', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='events.event', verbose_name='event')),
                ('registration', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='bank_rows', to='events.registration', verbose_name='registration')),
            ],
            options={
                'verbose_name': 'bank statement row',
                'verbose_name_plural': 'bank statement rows',
                'ordering': ['-imported_at', 'line', 'id'],
            },
        ),
        migrations.CreateModel(
            name='SavedEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('visitor_token', models.CharField(blank=True, db_index=True, max_length=40, verbose_name='visitor token')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='saves', to='events.event', verbose_name='event')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='saved_events', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'saved event',
                'verbose_name_plural': 'saved events',
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='TicketType',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, verbose_name='position')),
                ('identifier', models.CharField(help_text='What programs and agents use for this type, e.g. early_bird. Never shown.', max_length=40, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9_]{0,39}$', 'An identifier is a lowercase letter, then up to 39 lowercase letters, digits or underscores.')], verbose_name='identifier')),
                ('name_en', models.CharField(max_length=100, verbose_name='name (English)')),
                ('name_zh_hant', models.CharField(max_length=100, verbose_name='name (Traditional Chinese)')),
                ('price', models.PositiveIntegerField(default=0, help_text='0 is a free ticket.', verbose_name='price (TWD)')),
                ('sales_start', models.DateTimeField(blank=True, null=True, verbose_name='on sale from')),
                ('sales_end', models.DateTimeField(blank=True, null=True, verbose_name='on sale until')),
                ('cap', models.PositiveIntegerField(blank=True, help_text="Empty: only the event's capacity limits it.", null=True, verbose_name='at most')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ticket_types', to='events.event', verbose_name='event')),
            ],
            options={
                'verbose_name': 'ticket type',
                'verbose_name_plural': 'ticket types',
                'ordering': ['event', 'position', 'id'],
            },
        ),
        migrations.CreateModel(
            name='WaitlistEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('waiting', 'Waiting'), ('offered', 'Offered a seat'), ('claimed', 'Registered'), ('declined', 'Declined the offer'), ('left', 'Left the list'), ('expired', 'Offer expired'), ('closed', 'Event cancelled')], default='waiting', max_length=20, verbose_name='status')),
                ('joined_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='joined')),
                ('offered_at', models.DateTimeField(blank=True, null=True, verbose_name='offered')),
                ('expires_at', models.DateTimeField(blank=True, null=True, verbose_name='offer expires')),
                ('ended_at', models.DateTimeField(blank=True, null=True, verbose_name='ended')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='waitlist', to='events.event', verbose_name='event')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='waitlist', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'waiting-list entry',
                'verbose_name_plural': 'waiting list',
                'ordering': ['joined_at', 'id'],
            },
        ),
        migrations.CreateModel(
            name='Notification',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('registration_confirmed', 'Registration confirmed'), ('registration_pending', 'Registration waiting for approval'), ('registration_approved', 'Registration approved'), ('registration_declined', 'Registration declined'), ('ticket', 'Ticket sent again'), ('waitlist_offer', 'Seat offered'), ('offer_expired', 'Offer expired'), ('event_cancelled', 'Event cancelled'), ('reminder', 'Reminder'), ('payment_due', 'Payment instructions'), ('payment_reminder', 'Payment reminder'), ('payment_expired', 'Payment deadline passed'), ('payment_confirmed', 'Payment received')], max_length=30, verbose_name='kind')),
                ('key', models.CharField(max_length=200, unique=True, verbose_name='idempotency key')),
                ('email', models.EmailField(max_length=254, verbose_name='to')),
                ('language', models.CharField(max_length=10, verbose_name='language')),
                ('status', models.CharField(choices=[('pending', 'Waiting to be sent'), ('sending', 'Being sent'), ('sent', 'Sent'), ('failed', 'Failed'), ('skipped', 'Not sent: no longer wanted')], default='pending', max_length=10, verbose_name='status')),
                ('attempts', models.PositiveSmallIntegerField(default=0, verbose_name='attempts')),
                ('last_error', models.TextField(blank=True, verbose_name='last error')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='created')),
                ('claimed_at', models.DateTimeField(blank=True, null=True, verbose_name='last attempt')),
                ('sent_at', models.DateTimeField(blank=True, null=True, verbose_name='sent')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to='events.event', verbose_name='event')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                ('registration', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='events.registration', verbose_name='registration')),
                ('entry', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='events.waitlistentry', verbose_name='waiting-list entry')),
            ],
            options={
                'verbose_name': 'notification',
                'verbose_name_plural': 'notifications',
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='Activity',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('action', models.CharField(db_index=True, max_length=40, verbose_name='action')),
                ('mode', models.CharField(choices=[('ui', 'Person on a page'), ('agent', 'Agent tool'), ('api', 'API client'), ('admin', 'Organiser in the admin'), ('mcp', 'Agent over MCP'), ('system', 'The site itself')], max_length=10, verbose_name='mode')),
                ('outcome', models.CharField(max_length=40, verbose_name='outcome')),
                ('visitor_token', models.CharField(blank=True, max_length=40, verbose_name='visitor token')),
                ('client', models.CharField(blank=True, default='', max_length=100, verbose_name='client')),
                ('claimed_mode', models.CharField(blank=True, choices=[('ui', 'Person on a page'), ('agent', 'Agent tool'), ('api', 'API client'), ('admin', 'Organiser in the admin'), ('mcp', 'Agent over MCP'), ('system', 'The site itself')], db_default='', default='', max_length=10, verbose_name='claimed mode')),
                ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now, verbose_name='time')),
                ('counted', models.BooleanField(db_default=True, default=True, verbose_name="counted in the day's total")),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                ('event', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='events.event', verbose_name='event')),
            ],
            options={
                'verbose_name': 'activity',
                'verbose_name_plural': 'activities',
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(condition=models.Q(('counted', False)), fields=['id'], name='activity_uncounted')],
                'constraints': [models.CheckConstraint(condition=models.Q(('mode__in', ['ui', 'agent', 'api', 'admin', 'mcp', 'system'])), name='activity_mode_valid')],
            },
        ),
        migrations.CreateModel(
            name='EventStaff',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('manager', 'Manager'), ('door', 'Door staff')], max_length=10, verbose_name='role')),
                ('added_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='added')),
                ('event', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='staff', to='events.event', verbose_name='event')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='event_roles', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'event staff member',
                'verbose_name_plural': 'event staff',
                'constraints': [models.UniqueConstraint(fields=('event', 'user'), name='event_staff_once'), models.CheckConstraint(condition=models.Q(('role__in', ['manager', 'door'])), name='event_staff_role_valid')],
            },
        ),
        migrations.AddConstraint(
            model_name='question',
            constraint=models.UniqueConstraint(fields=('event', 'identifier'), name='question_identifier_once'),
        ),
        migrations.AddConstraint(
            model_name='question',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['text', 'long_text', 'number', 'boolean', 'consent', 'single_choice', 'multi_choice', 'date', 'email', 'url', 'phone'])), name='question_kind_valid'),
        ),
        migrations.AddConstraint(
            model_name='questionoption',
            constraint=models.UniqueConstraint(fields=('question', 'identifier'), name='question_option_identifier_once'),
        ),
        migrations.AddIndex(
            model_name='registration',
            index=models.Index(fields=['event', 'status'], name='registration_event_status'),
        ),
        migrations.AddIndex(
            model_name='registration',
            index=models.Index(condition=models.Q(('status', 'pending_payment')), fields=['payment_due_at'], name='registration_payment_due'),
        ),
        migrations.AddConstraint(
            model_name='registration',
            constraint=models.UniqueConstraint(condition=models.Q(('status__in', ('confirmed', 'pending_approval', 'pending_payment'))), fields=('user', 'event'), name='registration_one_active_per_user_event'),
        ),
        migrations.AddConstraint(
            model_name='registration',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['confirmed', 'pending_approval', 'pending_payment', 'cancelled', 'declined', 'expired'])), name='registration_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='registration',
            constraint=models.CheckConstraint(condition=models.Q(('payment_status__in', ['none', 'awaiting', 'checking', 'at_door', 'paid', 'unpaid', 'refunded'])), name='registration_payment_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='registration',
            constraint=models.CheckConstraint(condition=models.Q(('refunded_amount__lte', models.F('paid_amount'))), name='registration_refund_at_most_paid'),
        ),
        migrations.AddConstraint(
            model_name='registration',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'pending_payment'), _negated=True), ('payment_due_at__isnull', False), _connector='OR'), name='registration_pending_payment_has_deadline'),
        ),
        migrations.AddConstraint(
            model_name='checkin',
            constraint=models.UniqueConstraint(condition=models.Q(('undone_at__isnull', True)), fields=('registration',), name='check_in_once_per_registration'),
        ),
        migrations.AddConstraint(
            model_name='bankstatementrow',
            constraint=models.CheckConstraint(condition=models.Q(('state__in', ['matched', 'late_confirmed', 'already_paid', 'no_match', 'invalid', 'late', 'partial', 'overpaid', 'cancelled'])), name='bank_row_state_valid'),
        ),
        migrations.AddConstraint(
            model_name='savedevent',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('user__isnull', False), ('visitor_token', '')), models.Q(('user__isnull', True), models.Q(('visitor_token', ''), _negated=True)), _connector='OR'), name='saved_event_one_owner'),
        ),
        migrations.AddConstraint(
            model_name='savedevent',
            constraint=models.UniqueConstraint(condition=models.Q(('user__isnull', False)), fields=('user', 'event'), name='saved_event_unique_user'),
        ),
        migrations.AddConstraint(
            model_name='savedevent',
            constraint=models.UniqueConstraint(condition=models.Q(('visitor_token', ''), _negated=True), fields=('visitor_token', 'event'), name='saved_event_unique_token'),
        ),
        migrations.AddConstraint(
            model_name='tickettype',
            constraint=models.UniqueConstraint(fields=('event', 'identifier'), name='ticket_type_identifier_once'),
        ),
        migrations.AddConstraint(
            model_name='tickettype',
            constraint=models.CheckConstraint(condition=models.Q(('cap__isnull', True), ('cap__gte', 1), _connector='OR'), name='ticket_type_cap_positive'),
        ),
        migrations.AddConstraint(
            model_name='tickettype',
            constraint=models.CheckConstraint(condition=models.Q(('sales_start__isnull', True), ('sales_end__isnull', True), ('sales_end__gt', models.F('sales_start')), _connector='OR'), name='ticket_type_sales_window', violation_error_message='Sales must end after they start.'),
        ),
        migrations.AddIndex(
            model_name='waitlistentry',
            index=models.Index(fields=['event', 'status', 'joined_at'], name='waitlist_queue'),
        ),
        migrations.AddConstraint(
            model_name='waitlistentry',
            constraint=models.UniqueConstraint(condition=models.Q(('status__in', ('waiting', 'offered'))), fields=('user', 'event'), name='waitlist_one_active_per_user_event'),
        ),
        migrations.AddConstraint(
            model_name='waitlistentry',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['waiting', 'offered', 'claimed', 'declined', 'left', 'expired', 'closed'])), name='waitlist_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='waitlistentry',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'offered'), _negated=True), ('expires_at__isnull', False), _connector='OR'), name='waitlist_offer_expires'),
        ),
        migrations.AddIndex(
            model_name='notification',
            index=models.Index(fields=['status', 'created_at'], name='notification_status'),
        ),
        migrations.AddConstraint(
            model_name='notification',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['registration_confirmed', 'registration_pending', 'registration_approved', 'registration_declined', 'ticket', 'waitlist_offer', 'offer_expired', 'event_cancelled', 'reminder', 'payment_due', 'payment_reminder', 'payment_expired', 'payment_confirmed'])), name='notification_kind_valid'),
        ),
        migrations.AddConstraint(
            model_name='notification',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['pending', 'sending', 'sent', 'failed', 'skipped'])), name='notification_status_valid'),
        ),
        TrigramExtension(),
        migrations.RunPython(trigram_indexes.create, trigram_indexes.drop),
        migrations.RunPython(keyword_pairs.create, keyword_pairs.drop),
    ]
